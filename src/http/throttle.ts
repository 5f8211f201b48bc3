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

/**
 * `perMinute` calls per key (the caller's user or admin id, from `keyOf`) for
 * endpoints that store or fan out work; IBIS_THROTTLE_OFF lifts it. One
 * limiter per use: each endpoint group has its own budget.
 */
export function perKeyThrottle<C extends Context>(services: Services, perMinute: number, keyOf: (c: C) => string): MiddlewareHandler {
  const limiter = new WindowLimiter(perMinute, 60_000, services.now, services.config.throttleOff);
  return async (c, next) => {
    if (!limiter.take(keyOf(c as C))) return failureResponse(c, { kind: "rate_limited", msg: "too many requests, try again in a minute" });
    await next();
  };
}
