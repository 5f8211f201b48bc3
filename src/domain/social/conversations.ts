import { eq, sql, type SQL } from "drizzle-orm";
import { conversationStates } from "../../db/schema/index.ts";
import { ID_EPOCH_MS, idFloorForTime, toId } from "../../ids/tsid.ts";
import { tryParseJson } from "../../protocol/json.ts";
import { fail, ok, type Result } from "../errors.ts";
import { membership, type SocialContext } from "./context.ts";
import {
  conversationKey,
  mergeConversations,
  type ConversationCandidate,
  type ConversationState,
  type ConversationType,
} from "./rules.ts";

interface LastRow {
  conv: unknown;
  id: unknown;
  client_id: string;
  chat_type: string;
  from_id: unknown;
  to_id: unknown;
  msg_type: string;
  payload: string;
  e2ee: string | null;
  created_at: string | null;
  server_ts: unknown;
}

type Item = ConversationCandidate & { last_msg_id: string; last_msg: Record<string, unknown> };

const big = (v: unknown): bigint | null => (v === null || v === undefined ? null : (toId(v) ?? null));

/** Stored JSON text back to a value; a raw ciphertext string stays a string. */
function jsonText(text: string | null): unknown {
  if (text === null) return undefined;
  const parsed = tryParseJson(text);
  return parsed.ok ? parsed.value : text;
}

function item(type: ConversationType, r: LastRow): Item {
  const serverTs = Number(r.server_ts);
  const e2ee = jsonText(r.e2ee);
  const createdAt = jsonText(r.created_at);
  return {
    conversation_type: type,
    conversation_id: big(r.conv)!,
    server_ts: serverTs,
    last_msg_id: r.client_id,
    last_msg: {
      id: r.client_id,
      server_msg_id: big(r.id),
      type: r.chat_type,
      from: big(r.from_id),
      to: big(r.to_id),
      msg_type: r.msg_type,
      payload: jsonText(r.payload),
      ...(e2ee !== undefined ? { e2ee } : {}),
      ...(createdAt !== undefined ? { created_at: createdAt } : {}),
      server_ts: serverTs,
    },
  };
}

const COLS = sql`m.id, m.client_id, m.chat_type, m.from_id, m.to_id, m.msg_type, m.payload, m.e2ee, m.created_at, m.server_ts`;
const newerThan = (since: number | undefined) => (since === undefined ? sql`` : sql` and m.server_ts > ${since}`);

/**
 * A message's server id is minted after its `server_ts` is taken, on the same node, within the uplink's handling
 * (well under this margin, a clock stepped back included): so `server_ts > since` implies an id minted after
 * `since − margin`, which bounds the per-side indexes' ranges (they are by server id).
 */
const MINT_MARGIN_MS = 10 * 60_000;
const newerC2C = (since: number | undefined) =>
  since === undefined ? sql`` : sql`${newerThan(since)} and m.id >= ${idFloorForTime(Math.max(since - MINT_MARGIN_MS, Number(ID_EPOCH_MS)))}`;

/**
 * The newest C2C per peer of `me`: the partial indexes messages_c2c_from_idx
 * and messages_c2c_to_idx serve the two sides (test/domain/social/conversations-plan.test.ts).
 */
export function lastC2CQuery(me: bigint, since?: number): SQL {
  return sql`select distinct on (conv)
      case when m.from_id = ${me} then m.to_id else m.from_id end as conv, ${COLS}
    from messages m
    where m.chat_type = 'C2C' and (m.from_id = ${me} or m.to_id = ${me})${newerC2C(since)}
    order by conv, m.server_ts desc, m.id desc`;
}

/**
 * The newest C2G of each group `me` is a member of now, among what `me` may
 * see (numbered after they joined: a new member is not shown what was said
 * before, docs/delivery.md "Membership"): one backward step on the group's
 * timeline index per open membership span.
 */
export function lastC2GQuery(me: bigint, since?: number): SQL {
  return sql`select t.conv_id as conv, ${COLS}
    from timeline_member s
    cross join lateral (select t.message_id, t.conv_id from timeline t
      where t.conv_id = s.conv_id and t.seq > s.join_seq order by t.seq desc limit 1) t
    join messages m on m.id = t.message_id
    where s.user_id = ${me} and s.leave_seq is null${newerThan(since)}`;
}

/** The conversation list (§2.3) and its server-side pin and delete state. */
export class ConversationService {
  constructor(private readonly ctx: SocialContext) {}

  async mine(me: bigint, since?: number) {
    const [c2c, c2g, states] = await Promise.all([
      this.ctx.store.rows<LastRow>(lastC2CQuery(me, since)),
      this.ctx.store.rows<LastRow>(lastC2GQuery(me, since)),
      this.ctx.db.select().from(conversationStates).where(eq(conversationStates.userId, me)),
    ]);
    const stateMap = new Map<string, ConversationState>();
    for (const s of states) {
      stateMap.set(conversationKey(s.conversationType as ConversationType, s.conversationId), s);
    }
    const candidates = [...c2c.map((r) => item("c2c", r)), ...c2g.map((r) => item("c2g", r))];
    return mergeConversations(candidates, stateMap, since);
  }

  async #upsert(me: bigint, type: ConversationType, id: bigint, set: { isPinned?: boolean; deletedTs?: number }) {
    const now = this.ctx.now();
    await this.ctx.db
      .insert(conversationStates)
      .values({ userId: me, conversationType: type, conversationId: id, updatedAt: now, ...set })
      .onConflictDoUpdate({
        target: [conversationStates.userId, conversationStates.conversationType, conversationStates.conversationId],
        set: { ...set, updatedAt: now },
      });
  }

  /** Only a conversation the caller can have: an existing peer, or a group the caller is in. */
  async #check(me: bigint, type: ConversationType, id: bigint): Promise<Result<unknown>> {
    if (type === "c2c") return (await this.ctx.facts.user(id)) ? ok(undefined) : fail("user_not_found", "user not found");
    return membership(this.ctx, me, id);
  }

  async pin(me: bigint, type: ConversationType, id: bigint, isPinned: boolean): Promise<Result<Record<string, unknown>>> {
    const check = await this.#check(me, type, id);
    if (!check.ok) return check;
    await this.#upsert(me, type, id, { isPinned });
    return ok({ conversation_id: id, conversation_type: type, is_pinned: isPinned });
  }

  /**
   * Deletion record: everything up to now is hidden; a newer message brings the
   * conversation back. The pin is cleared with it.
   */
  async remove(me: bigint, type: ConversationType, id: bigint): Promise<Result<Record<string, unknown>>> {
    const check = await this.#check(me, type, id);
    if (!check.ok) return check;
    const deletedTs = this.ctx.now();
    await this.#upsert(me, type, id, { deletedTs, isPinned: false });
    return ok({ conversation_id: id, conversation_type: type, deleted_ts: deletedTs });
  }
}
