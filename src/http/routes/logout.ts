import { Hono } from "hono";
import { z } from "zod";
import { AccountLogout, REASON_MAX } from "../../domain/auth/logout.ts";
import { FailureError } from "../../domain/errors.ts";
import type { Services } from "../../services.ts";
import { currentUser, requireUser, type AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { body, input } from "../params.ts";
import { userIdKeys, userIdParam } from "../user-id.ts";
import { perUserThrottle } from "../throttle.ts";
import { zId } from "../zod.ts";

const Apply = z.object({
  reason: z.string().max(REASON_MAX).optional(),
  /** Optional confirmation of whose account this is; it must be the caller's. */
  user_id: zId.optional(),
});

/** Account logout (spec §4.1): apply schedules the deletion, cancel undoes it (docs/auth.md). */
export function logoutRoutes(services: Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const logout = new AccountLogout(services.store, services.config.logoutGraceDays, services.now);
  app.use("/api/v1/user/apply_logout", requireUser(services));
  app.use("/api/v1/user/cancel_logout", requireUser(services));
  const writes = perUserThrottle(services, services.config.stateWritesPerMin, "logout requests");

  app.post("/api/v1/user/apply_logout", writes, async (c) => {
    const { userId } = currentUser(c);
    const data = await body(c);
    const req = input(Apply, { reason: data.reason, user_id: userIdParam(data) });
    if (req.user_id !== undefined && req.user_id !== userId) {
      throw new FailureError({ kind: "forbidden", msg: "an account can only request its own deletion" });
    }
    const r = await logout.apply(userId, req.reason ?? "");
    return ok(c, { ...userIdKeys(userId), requested_at: r.requestedAt, delete_after_at: r.deleteAfterAt });
  });

  app.post("/api/v1/user/cancel_logout", writes, async (c) => {
    const { userId } = currentUser(c);
    const cancelled = await logout.cancel(userId);
    return ok(c, { ...userIdKeys(userId), cancelled });
  });
  return app;
}
