import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { WindowLimiter } from "../domain/auth/throttle.ts";
import type { Services } from "../services.ts";
import { currentUser, type AppEnv } from "./auth.ts";
import { envelope, json } from "./envelope.ts";
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
 * `perMinute` calls per signed-in user for `what` (group management, friend
 * requests: each stores and fans out notices). Mounted after requireUser.
 * Counted per node, like the message throttle (docs/http.md).
 */
export function perUserThrottle(services: Services, perMinute: number, what: string): MiddlewareHandler<AppEnv> {
  return perKeyThrottle(services, perMinute, what, (c: Context<AppEnv>) => String(currentUser(c).userId));
}

/** `perMinute` calls per key from `keyOf` (a user, an admin) for `what`; IBIS_THROTTLE_OFF lifts it. */
export function perKeyThrottle<C extends Context>(services: Services, perMinute: number, what: string, keyOf: (c: C) => string): MiddlewareHandler {
  const limiter = new WindowLimiter(perMinute, 60_000, services.now, services.config.throttleOff);
  return async (c, next) => {
    if (!limiter.take(keyOf(c as C))) return failureResponse(c, { kind: "rate_limited", msg: `too many ${what}, try again in a minute` });
    await next();
  };
}

/** REST bodies above `max` bytes are refused (413 envelope) before they are read into memory. */
export function restBodyLimit(max: number): MiddlewareHandler {
  return bodyLimit({ maxSize: max, onError: (c) => json(c, envelope(413, `request body over ${max} bytes`, {}), 413) });
}
