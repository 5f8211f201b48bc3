/**
 * Offline pull, offline acknowledgement, history and read sync
 * (docs/delivery.md). Every call is for the caller's own devices and
 * conversations; group history needs membership.
 */
import { Hono } from "hono";
import { z } from "zod";
import { conversationWhere } from "../../delivery/inbox.ts";
import type { Delivery } from "../../delivery/index.ts";
import { parseMessageId } from "../../delivery/msg-id.ts";
import { toWire } from "../../delivery/wire.ts";
import { FailureError } from "../../domain/errors.ts";
import type { Services } from "../../services.ts";
import { currentUser, requireUser, type AppEnv, type AuthUser } from "../auth.ts";
import { ok } from "../envelope.ts";
import type { BatchResult } from "../paging.ts";
import { schema, valid } from "../openapi.ts";
import { perUserThrottle } from "../throttle.ts";
import { zId, zInt } from "../zod.ts";

const limit = (fallback: number) => zInt.pipe(z.number().min(1).max(1000)).default(fallback);
const msgId = z.string().refine((s) => parseMessageId(s) !== undefined, "must be a message id <TYPE>.<tsid>.<timestamp>.<random>");
const did = z.string().min(1).max(128).optional();

const OFFLINE = z.object({ did, limit: limit(100) });
const OFFLINE_ACK = z.object({ did, msg_ids: z.array(z.string().min(1)).min(1).max(1000) });
const HISTORY = z.object({
  chat_type: z.string().transform((s) => s.toLowerCase()).pipe(z.enum(["c2c", "c2g"])),
  peer_id: zId,
  before_id: msgId.optional(),
  limit: limit(20),
});
const READ = z.object({ peer_id: zId, msg_id: msgId });

const forbidden = (msg: string) => new FailureError({ kind: "forbidden", msg });

export function msgRoutes(services: Services, delivery: Delivery): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("/api/v1/msg/*", requireUser(services));
  const writes = perUserThrottle(services, services.config.stateWritesPerMin, "acknowledgements and read syncs");

  /** The device a call is about: the token's own, or another active device of the same user. */
  async function device(user: AuthUser, asked: string | undefined): Promise<string> {
    if (asked === undefined || asked === user.deviceId) return user.deviceId;
    if (!(await delivery.inbox.isActiveDevice(user.userId, asked))) throw forbidden("did is not one of your devices");
    return asked;
  }

  app.get("/api/v1/msg/offline", schema({ summary: "Offline messages for this device (or another active device of mine)", params: OFFLINE }), async (c) => {
    const user = currentUser(c);
    const q = valid(c, OFFLINE);
    const deviceId = await device(user, q.did);
    await delivery.inbox.ensureDevice(user.userId, deviceId, await delivery.core.pullFloor(user.userId, deviceId));
    const acked = await delivery.core.unconfirmed(user.userId, deviceId);
    const page = await delivery.inbox.pending(user.userId, deviceId, q.limit, acked, services.config.pageMaxBytes);
    return ok(c, { list: page.rows.map(toWire), has_more: page.more });
  });

  app.post("/api/v1/msg/offline_ack", writes, schema({ summary: "Acknowledge offline messages as delivered", params: OFFLINE_ACK }), async (c) => {
    const user = currentUser(c);
    const q = valid(c, OFFLINE_ACK);
    const deviceId = await device(user, q.did);
    const found = await delivery.core.markDelivered(user.userId, deviceId, q.msg_ids);
    const out: BatchResult<string> = { success: [], failed: [] };
    for (const id of q.msg_ids) {
      if (found.has(id)) out.success.push(id);
      else out.failed.push({ id, error: "not found" });
    }
    return ok(c, out);
  });

  app.get("/api/v1/msg/history", schema({ summary: "Conversation history, newest first (c2g: members only)", params: HISTORY }), async (c) => {
    const user = currentUser(c);
    const q = valid(c, HISTORY);
    if (q.chat_type === "c2g") {
      // Membership read fresh (not from the delivery path's cache); the same refusal as every group endpoint:
      // 943 not_group_member, 404 for no such group. Then only what the caller's spans cover (docs/delivery.md).
      const member = await delivery.social.groupMembers(user.userId, q.peer_id, { fresh: true });
      if (!member.ok) throw new FailureError(member.error);
      let beforeSeq: bigint | undefined;
      if (q.before_id !== undefined) {
        beforeSeq = await delivery.inbox.seqInGroup(q.peer_id, q.before_id);
        if (beforeSeq === undefined) throw new FailureError({ kind: "bad_request", msg: "before_id: not a message of this conversation" });
      }
      const page = await delivery.inbox.groupHistory(user.userId, q.peer_id, beforeSeq, q.limit, services.config.pageMaxBytes);
      return ok(c, { list: page.rows.map(toWire), has_more: page.more });
    }
    const where = conversationWhere(user.userId, q.peer_id);
    let before: bigint | undefined;
    if (q.before_id !== undefined) {
      before = await delivery.inbox.idInConversation(where, q.before_id);
      if (before === undefined) throw new FailureError({ kind: "bad_request", msg: "before_id: not a message of this conversation" });
    }
    const page = await delivery.inbox.history(where, before, q.limit, services.config.pageMaxBytes);
    return ok(c, { list: page.rows.map(toWire), has_more: page.more });
  });

  /** Read sync uplink: the reader's other devices get S2C message_read_sync. */
  app.post("/api/v1/msg/read", writes, schema({ summary: "Read sync: my other devices get message_read_sync", params: READ }), async (c) => {
    const user = currentUser(c);
    const q = valid(c, READ);
    await delivery.notifier.notify(
      [user.userId],
      "message_read_sync",
      { user_id: user.userId, peer_id: q.peer_id, msg_id: q.msg_id },
      { exceptDevice: user },
    );
    return ok(c, {});
  });

  return app;
}
