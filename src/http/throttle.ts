import type { Context, MiddlewareHandler } from "hono";
import { WindowLimiter } from "../domain/auth/throttle.ts";
import type { Services } from "../services.ts";
import { currentUser, type AppEnv } from "./auth.ts";
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

/**
 * `perMinute` calls per signed-in user (after requireUser), per node: channel
 * writes and reads (docs/channels.md). IBIS_THROTTLE_OFF lifts it.
 */
export function perUserThrottle(services: Services, perMinute: number): MiddlewareHandler<AppEnv> {
  const limiter = new WindowLimiter(perMinute, 60_000, services.now, services.config.throttleOff);
  return async (c, next) => {
    if (!limiter.take(currentUser(c).userId.toString())) {
      return failureResponse(c, { kind: "rate_limited", msg: "too many requests, try again in a minute" });
    }
    await next();
  };
}
