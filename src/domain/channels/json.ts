/** The channel objects as they go out (docs/channels.md): ids as bigint (exact JSON numbers), `_at` in ms. */
import type { channelInvitations, channelMessages, channelOrders } from "../../db/schema/channels.ts";
import { parseJson } from "../../protocol/json.ts";
import type { Relation } from "./access.ts";
import type { ChannelRow } from "./context.ts";

/** Microseconds UTC as RFC 3339 with six fractional digits (spec §2.1.3, §6): 2026-11-25T07:57:35.123456Z. */
export function rfc3339Micro(us: bigint): string {
  const iso = new Date(Number(us / 1000n)).toISOString(); // …SS.mmmZ
  return `${iso.slice(0, -1)}${(us % 1000n).toString().padStart(3, "0")}Z`;
}

/** Now in microseconds: the clock's ms plus the sub-millisecond part of the monotonic clock. */
export function nowMicros(nowMs: number): bigint {
  return BigInt(nowMs) * 1000n + BigInt(Math.floor((performance.now() % 1) * 1000));
}

const usToMs = (us: bigint | null): number | null => (us === null ? null : Number(us / 1000n));

export function channelJson(c: ChannelRow, rel?: Relation) {
  return {
    channel_id: c.id,
    name: c.name,
    description: c.description,
    avatar: c.avatar,
    custom_id: c.customId ?? "",
    tags: c.tags,
    visibility: c.visibility,
    access_type: c.accessType,
    join_policy: c.joinPolicy,
    price: c.price,
    currency: c.currency,
    owner_uid: c.ownerId,
    owner_user_id: c.ownerId,
    subscriber_count: c.subscriberCount,
    last_seq: c.lastSeq,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
    ...(rel
      ? {
          is_creator: rel.creator,
          admin_role: rel.role ?? 0,
          is_subscribed: rel.subscribed,
          purchased: rel.purchased,
        }
      : {}),
  };
}

type MessageRow = typeof channelMessages.$inferSelect;

export function messageJson(m: MessageRow, reactions: Record<string, number> = {}) {
  const revoked = m.revokedAtUs !== null;
  return {
    message_id: m.id,
    channel_id: m.channelId,
    seq: m.seq,
    author_uid: m.authorId,
    author_user_id: m.authorId,
    msg_type: m.msgType,
    // A revoked message stays in the timeline as a tombstone (it keeps its seq; docs/channels.md).
    content: revoked ? "" : m.content,
    payload: revoked || m.payload === null ? null : parseJson(m.payload),
    request_id: m.requestId ?? "",
    view_count: m.viewCount,
    reaction_count: m.reactionCount,
    reactions,
    revoked,
    created_at: m.createdAt,
    edited_at: usToMs(m.editedAtUs),
    revoked_at: usToMs(m.revokedAtUs),
  };
}

type InvitationRow = typeof channelInvitations.$inferSelect;

/** `expired` is read from expires_at: a pending invitation past it is expired, nothing rewrites it. */
export function invitationStatus(i: Pick<InvitationRow, "status" | "expiresAt">, now: number): string {
  return i.status === "pending" && i.expiresAt <= now ? "expired" : i.status;
}

export function invitationJson(i: InvitationRow, now: number) {
  return {
    invitation_id: i.id,
    channel_id: i.channelId,
    inviter_uid: i.inviterId,
    inviter_user_id: i.inviterId,
    invitee_uid: i.inviteeId,
    invitee_user_id: i.inviteeId,
    status: invitationStatus(i, now),
    created_at: i.createdAt,
    expires_at: i.expiresAt,
    responded_at: i.respondedAt,
  };
}

type OrderRow = typeof channelOrders.$inferSelect;

export function orderJson(o: OrderRow) {
  return {
    order_no: o.orderNo,
    channel_id: o.channelId,
    uid: o.userId,
    user_id: o.userId,
    amount: o.amount,
    currency: o.currency,
    status: o.status,
    provider: o.provider,
    transaction_id: o.transactionId ?? "",
    created_at: o.createdAt,
    paid_at: o.paidAt,
    cancelled_at: o.cancelledAt,
  };
}
