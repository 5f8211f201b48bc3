import { Hono } from "hono";
import { z } from "zod";
import type { Social } from "../../domain/social/index.ts";
import { requireId } from "../../domain/social/input.ts";
import { unwrap } from "../../domain/errors.ts";
import type { Services } from "../../services.ts";
import { currentUser, requireUser, type AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { parsePage, paged } from "../paging.ts";
import { input, params } from "../params.ts";
import { perUserThrottle } from "../throttle.ts";
import { stringifyJson } from "../../protocol/json.ts";

/** A request's free payload is stored and pushed as is: a few KiB, not the body limit. */
export const REQUEST_PAYLOAD_MAX = 4096;
const freePayload = z.object({
  payload: z
    .record(z.string(), z.unknown())
    .refine((p) => stringifyJson(p).length <= REQUEST_PAYLOAD_MAX, `must be at most ${REQUEST_PAYLOAD_MAX} bytes of JSON`)
    .optional(),
});

/** Friends and denylist (docs/social.md). */
export function friendRoutes(services: Services, social: Social): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("/api/v1/friend/*", requireUser(services));
  // Requests and answers notify the other user: bounded per user (a rejected request also waits, friends.ts).
  const requests = perUserThrottle(services, services.config.friendRequestsPerMin, "friend requests");

  app.post("/api/v1/friend/add", requests, async (c) => {
    const p = await params(c);
    const to = unwrap(requireId(p, "to", "user_id", "uid"));
    const { payload } = input(freePayload, p);
    return ok(c, unwrap(await social.friends.add(currentUser(c).userId, to, payload)));
  });

  app.post("/api/v1/friend/confirm", requests, async (c) => {
    const p = await params(c);
    const from = unwrap(requireId(p, "from", "user_id", "uid"));
    const { payload } = input(freePayload, p);
    return ok(c, unwrap(await social.friends.confirm(currentUser(c).userId, from, payload)));
  });

  app.post("/api/v1/friend/reject", requests, async (c) => {
    const from = unwrap(requireId(await params(c), "from", "user_id", "uid"));
    return ok(c, unwrap(await social.friends.reject(currentUser(c).userId, from)));
  });

  app.post("/api/v1/friend/delete", requests, async (c) => {
    const other = unwrap(requireId(await params(c), "uid", "user_id"));
    return ok(c, unwrap(await social.friends.remove(currentUser(c).userId, other)));
  });

  app.get("/api/v1/friend/list", async (c) => ok(c, { list: await social.friends.list(currentUser(c).userId) }));

  app.post("/api/v1/friend/denylist/add", requests, async (c) => {
    const denied = unwrap(requireId(await params(c), "denied_user_id", "user_id", "uid"));
    return ok(c, unwrap(await social.denylist.add(currentUser(c).userId, denied)));
  });

  app.post("/api/v1/friend/denylist/remove", requests, async (c) => {
    const denied = unwrap(requireId(await params(c), "denied_user_id", "user_id", "uid"));
    return ok(c, unwrap(await social.denylist.remove(currentUser(c).userId, denied)));
  });

  app.get("/api/v1/friend/denylist/page", async (c) => {
    const page = parsePage(await params(c));
    const { total, list } = await social.denylist.page(currentUser(c).userId, page.offset, page.size);
    return ok(c, paged(page, total, list));
  });

  return app;
}
