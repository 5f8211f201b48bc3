import type { Context, MiddlewareHandler } from "hono";
import { WindowLimiter } from "../domain/auth/throttle.ts";
import type { Services } from "../services.ts";
import { failureResponse } from "./errors.ts";

/** The peer address Bun saw (node.ts passes it as the `ip` binding); "" when unknown. */
export function clientIp(c: Context): string {
  return (c.env as { ip?: string } | undefined)?.ip ?? "";
}

/** `perMinute` calls per client IP (login, signup, refresh, admin login); IBIS_THROTTLE_OFF lifts it. */
export function perIpThrottle(services: Services, perMinute: number): MiddlewareHandler {
  const limiter = new WindowLimiter(perMinute, 60_000, services.now, services.config.throttleOff);
  return async (c, next) => {
    if (!limiter.take(clientIp(c))) {
      return failureResponse(c, { kind: "rate_limited", msg: "too many attempts, try again in a minute" });
    }
    await next();
  };
}
