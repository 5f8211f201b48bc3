import { Hono } from "hono";
import { z } from "zod";
import { AccountLogout, REASON_MAX } from "../../domain/auth/logout.ts";
import { FailureError } from "../../domain/errors.ts";
import type { Services } from "../../services.ts";
import { currentUser, requireUser, type AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { schema, valid } from "../openapi.ts";
import { userIdKeys } from "../user-id.ts";
import { perUserThrottle } from "../throttle.ts";
import { zId, zIdAlias } from "../zod.ts";

/** `user_id` (or `uid`, §9.4): optional confirmation of whose account this is; it must be the caller's. */
const Apply = z
  .object({
    reason: z.string().max(REASON_MAX).optional(),
    user_id: zIdAlias("optional; must be the caller (or uid)"),
    uid: zIdAlias(),
  })
  .transform(({ reason, user_id, uid }): { reason?: string; user_id?: unknown } => ({ reason, user_id: user_id ?? uid }))
  .pipe(z.object({ reason: z.string().optional(), user_id: zId.optional() }));

/** Account logout (spec §4.1): apply schedules the deletion, cancel undoes it (docs/auth.md). */
export function logoutRoutes(services: Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const logout = new AccountLogout(services.store, services.config.logoutGraceDays, services.now);
  app.use("/api/v1/user/apply_logout", requireUser(services));
  app.use("/api/v1/user/cancel_logout", requireUser(services));
  const writes = perUserThrottle(services, services.config.stateWritesPerMin, "logout requests");

  app.post("/api/v1/user/apply_logout", writes, schema({ summary: "Schedule my account's deletion after the grace period", body: Apply }), async (c) => {
    const { userId } = currentUser(c);
    const req = valid(c, Apply);
    if (req.user_id !== undefined && req.user_id !== userId) {
      throw new FailureError({ kind: "forbidden", msg: "an account can only request its own deletion" });
    }
    const r = await logout.apply(userId, req.reason ?? "");
    return ok(c, { ...userIdKeys(userId), requested_at: r.requestedAt, delete_after_at: r.deleteAfterAt });
  });

  app.post("/api/v1/user/cancel_logout", writes, schema({ summary: "Cancel my account's scheduled deletion" }), async (c) => {
    const { userId } = currentUser(c);
    const cancelled = await logout.cancel(userId);
    return ok(c, { ...userIdKeys(userId), cancelled });
  });
  return app;
}
