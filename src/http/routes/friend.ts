import { Hono } from "hono";
import { z } from "zod";
import type { Social } from "../../domain/social/index.ts";
import { requireId } from "../../domain/social/input.ts";
import { unwrap } from "../../domain/errors.ts";
import type { Services } from "../../services.ts";
import { currentUser, requireUser, type AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { pageFields, parsePage, paged } from "../paging.ts";
import { schema, valid } from "../openapi.ts";
import { perUserThrottle } from "../throttle.ts";
import { stringifyJson } from "../../protocol/json.ts";
import { zIdAlias } from "../zod.ts";

/** A request's free payload is stored and pushed as is: a few KiB, not the body limit. */
export const REQUEST_PAYLOAD_MAX = 4096;
const freePayload = z
  .record(z.string(), z.unknown())
  .refine((p) => stringifyJson(p).length <= REQUEST_PAYLOAD_MAX, `must be at most ${REQUEST_PAYLOAD_MAX} bytes of JSON`)
  .optional()
  .describe("free JSON object handed to the other user");
// Ids are read with requireId (first alias present wins), from query or body.
const Add = z.object({ to: zIdAlias("required (or user_id / uid)"), user_id: zIdAlias(), uid: zIdAlias(), payload: freePayload });
const Confirm = z.object({ from: zIdAlias("required (or user_id / uid)"), user_id: zIdAlias(), uid: zIdAlias(), payload: freePayload });
const Reject = Confirm.omit({ payload: true });
const Other = z.object({ uid: zIdAlias("required (or user_id)"), user_id: zIdAlias() });
const Denied = z.object({ denied_user_id: zIdAlias("required (or user_id / uid)"), user_id: zIdAlias(), uid: zIdAlias() });
const Page = z.object(pageFields);

/** Friends and denylist (docs/social.md). */
export function friendRoutes(services: Services, social: Social): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("/api/v1/friend/*", requireUser(services));
  // Requests and answers notify the other user: bounded per user (a rejected request also waits, friends.ts).
  const requests = perUserThrottle(services, services.config.friendRequestsPerMin, "friend requests");

  app.post("/api/v1/friend/add", requests, schema({ summary: "Send a friend request", params: Add }), async (c) => {
    const p = valid(c, Add);
    const to = unwrap(requireId(p, "to", "user_id", "uid"));
    return ok(c, unwrap(await social.friends.add(currentUser(c).userId, to, p.payload)));
  });

  app.post("/api/v1/friend/confirm", requests, schema({ summary: "Accept a friend request", params: Confirm }), async (c) => {
    const p = valid(c, Confirm);
    const from = unwrap(requireId(p, "from", "user_id", "uid"));
    return ok(c, unwrap(await social.friends.confirm(currentUser(c).userId, from, p.payload)));
  });

  app.post("/api/v1/friend/reject", requests, schema({ summary: "Reject a friend request", params: Reject }), async (c) => {
    const from = unwrap(requireId(valid(c, Reject), "from", "user_id", "uid"));
    return ok(c, unwrap(await social.friends.reject(currentUser(c).userId, from)));
  });

  app.post("/api/v1/friend/delete", requests, schema({ summary: "Remove a friend", params: Other }), async (c) => {
    const other = unwrap(requireId(valid(c, Other), "uid", "user_id"));
    return ok(c, unwrap(await social.friends.remove(currentUser(c).userId, other)));
  });

  app.get("/api/v1/friend/list", schema({ summary: "My friends" }), async (c) => ok(c, { list: await social.friends.list(currentUser(c).userId) }));

  app.post("/api/v1/friend/denylist/add", requests, schema({ summary: "Deny a user (blocks requests and messages)", params: Denied }), async (c) => {
    const denied = unwrap(requireId(valid(c, Denied), "denied_user_id", "user_id", "uid"));
    return ok(c, unwrap(await social.denylist.add(currentUser(c).userId, denied)));
  });

  app.post("/api/v1/friend/denylist/remove", requests, schema({ summary: "Remove a user from my denylist", params: Denied }), async (c) => {
    const denied = unwrap(requireId(valid(c, Denied), "denied_user_id", "user_id", "uid"));
    return ok(c, unwrap(await social.denylist.remove(currentUser(c).userId, denied)));
  });

  app.get("/api/v1/friend/denylist/page", schema({ summary: "My denylist, paged", params: Page }), async (c) => {
    const page = parsePage(valid(c, Page));
    const { total, list } = await social.denylist.page(currentUser(c).userId, page.offset, page.size);
    return ok(c, paged(page, total, list));
  });

  return app;
}
