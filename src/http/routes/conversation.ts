import { Hono } from "hono";
import { z } from "zod";
import { FailureError, unwrap } from "../../domain/errors.ts";
import type { Social } from "../../domain/social/index.ts";
import { requireId } from "../../domain/social/input.ts";
import { conversationType, type ConversationType } from "../../domain/social/rules.ts";
import type { Services } from "../../services.ts";
import { currentUser, requireUser, type AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { schema, valid } from "../openapi.ts";
import { perUserThrottle } from "../throttle.ts";
import { zAsSent, zBool, zIdAlias, zInt } from "../zod.ts";

const since = z.object({ last_server_ts: zInt.pipe(z.number().min(0)).optional() });
// conversation_type/conversation_id are checked by target(), before the route's own fields.
const Target = z.object({ conversation_type: zAsSent("c2c or c2g (required)"), conversation_id: zIdAlias("required") });
const Pin = Target.extend({ is_pinned: zBool });

function target(p: { conversation_type?: unknown; conversation_id?: unknown }): { type: ConversationType; id: bigint } {
  const type = conversationType(p.conversation_type);
  if (!type) throw new FailureError({ kind: "bad_request", msg: "conversation_type: must be c2c or c2g" });
  return { type, id: unwrap(requireId(p, "conversation_id")) };
}

/** The conversation list (§2.3) with server-side pin and delete (docs/social.md). */
export function conversationRoutes(services: Services, social: Social): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("/api/v1/conversation/*", requireUser(services));
  const writes = perUserThrottle(services, services.config.stateWritesPerMin, "conversation changes");

  app.get("/api/v1/conversation/mine", schema({ summary: "My conversations (changed since last_server_ts when given)", params: since }), async (c) => {
    const { last_server_ts } = valid(c, since);
    return ok(c, await social.conversations.mine(currentUser(c).userId, last_server_ts));
  });

  app.post("/api/v1/conversation/pin", writes, schema({ summary: "Pin or unpin a conversation", params: Pin }), async (c) => {
    const p = valid(c, Pin);
    const { type, id } = target(p);
    return ok(c, unwrap(await social.conversations.pin(currentUser(c).userId, type, id, p.is_pinned)));
  });

  app.post("/api/v1/conversation/delete", writes, schema({ summary: "Delete a conversation from my list", params: Target }), async (c) => {
    const { type, id } = target(valid(c, Target));
    return ok(c, unwrap(await social.conversations.remove(currentUser(c).userId, type, id)));
  });

  return app;
}
