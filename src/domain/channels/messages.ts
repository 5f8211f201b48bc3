import { and, desc, eq, inArray, lt, sql } from "drizzle-orm";
import { channelMessages, channelReactions, channelSubscriptions, channels } from "../../db/schema/channels.ts";
import { stringifyJson } from "../../protocol/json.ts";
import { fail, ok, type Result } from "../errors.ts";
import { bumpDaily, guard, utcDay, type ChannelContext } from "./context.ts";
import { UNREAD_ACTION } from "./fanout.ts";
import { messageJson, nowMicros, rfc3339Micro } from "./json.ts";
import { ViewDedupe } from "./views.ts";

type MessageRow = typeof channelMessages.$inferSelect;
type MessageJson = ReturnType<typeof messageJson>;

export interface PublishInput {
  readonly content: string;
  readonly msgType: string;
  /** JSON text of the payload object. */
  readonly payload?: string;
  readonly requestId?: string;
}

export interface MessageEdit {
  readonly content: string;
  readonly msgType?: string;
  readonly payload?: string;
}

/** Thrown inside the publish transaction to roll back the seq when the request id was already used. */
class AlreadyPublished extends Error {}

/** Reaction types one user may hold on one message: each is a row and a key of every reader's `reactions` map. */
export const MAX_REACTIONS_PER_USER = 8;

/** Thrown inside the reaction transaction to roll back an insert past MAX_REACTIONS_PER_USER. */
class TooManyReactions extends Error {}

/** The channel timeline: publish, read, views, reactions, edit and revoke (docs/channels.md). */
export class ChannelMessageService {
  readonly #views: ViewDedupe;

  constructor(private readonly ctx: ChannelContext) {
    this.#views = new ViewDedupe(ctx.now);
  }

  /**
   * One transaction: the channel row hands out the next seq (its row lock
   * orders concurrent publishes, so seqs have no gaps) and the message row is
   * inserted. A request_id already used by this author in this channel returns
   * the stored message and rolls the seq back. The unread pushes go out after.
   */
  async publish(me: bigint, channelId: bigint, input: PublishInput): Promise<Result<MessageJson>> {
    const g = await guard(this.ctx, me, channelId, "publish");
    if (!g.ok) return g;
    if (input.requestId) {
      const prior = await this.#byRequest(channelId, me, input.requestId);
      if (prior) return ok(messageJson(prior));
    }
    const id = this.ctx.ids.next();
    const now = this.ctx.now();
    let row: MessageRow | undefined;
    try {
      row = await this.ctx.db.transaction(async (tx) => {
        const [c] = await tx
          .update(channels)
          .set({ lastSeq: sql`${channels.lastSeq} + 1` })
          .where(and(eq(channels.id, channelId), sql`${channels.deletedAt} is null`))
          .returning({ seq: channels.lastSeq });
        if (!c) return undefined;
        const [m] = await tx
          .insert(channelMessages)
          .values({
            id,
            channelId,
            seq: c.seq,
            authorId: me,
            msgType: input.msgType,
            content: input.content,
            payload: input.payload ?? null,
            requestId: input.requestId ?? null,
            createdAt: now,
          })
          .onConflictDoNothing()
          .returning();
        if (!m) throw new AlreadyPublished();
        return m;
      });
    } catch (e) {
      if (!(e instanceof AlreadyPublished)) throw e;
      const prior = await this.#byRequest(channelId, me, input.requestId!);
      if (prior) return ok(messageJson(prior));
      throw e;
    }
    if (!row) return fail("channel_not_found", "channel not found");
    this.ctx.announce({ channelId, action: UNREAD_ACTION, subscribers: g.value.channel.subscriberCount });
    return ok(messageJson(row));
  }

  async #byRequest(channelId: bigint, author: bigint, requestId: string): Promise<MessageRow | undefined> {
    const [m] = await this.ctx.db
      .select()
      .from(channelMessages)
      .where(and(eq(channelMessages.channelId, channelId), eq(channelMessages.authorId, author), eq(channelMessages.requestId, requestId)));
    return m;
  }

  /** Newest first; `cursor` is a seq (exclusive), the answer's `cursor` the next one (null at the start). */
  async list(me: bigint, channelId: bigint, cursor: number | undefined, limit: number) {
    const g = await guard(this.ctx, me, channelId, "read");
    if (!g.ok) return g;
    const rows = await this.ctx.db
      .select()
      .from(channelMessages)
      .where(and(eq(channelMessages.channelId, channelId), cursor === undefined ? undefined : lt(channelMessages.seq, cursor)))
      .orderBy(desc(channelMessages.seq))
      .limit(limit + 1);
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const reactions = await this.#reactionCounts(page.map((m) => m.id));
    return ok({
      list: page.map((m) => messageJson(m, reactions.get(m.id))),
      cursor: more ? page[page.length - 1]!.seq : null,
      limit,
    });
  }

  async #reactionCounts(ids: bigint[]): Promise<Map<bigint, Record<string, number>>> {
    const out = new Map<bigint, Record<string, number>>();
    if (!ids.length) return out;
    const rows = await this.ctx.db
      .select({ messageId: channelReactions.messageId, type: channelReactions.reactionType, n: sql<number>`count(*)`.mapWith(Number) })
      .from(channelReactions)
      .where(inArray(channelReactions.messageId, ids))
      .groupBy(channelReactions.messageId, channelReactions.reactionType);
    for (const r of rows) {
      const m = out.get(r.messageId) ?? {};
      m[r.type] = r.n;
      out.set(r.messageId, m);
    }
    return out;
  }

  async #message(channelId: bigint, messageId: bigint): Promise<Result<MessageRow>> {
    const [m] = await this.ctx.db
      .select()
      .from(channelMessages)
      .where(and(eq(channelMessages.id, messageId), eq(channelMessages.channelId, channelId)));
    return m ? ok(m) : fail("channel_message_not_found", "message not found");
  }

  /**
   * Moves the caller's read cursor up to the message (never back) and pushes
   * the caller's new count (0 when it read the newest) to its devices on every node.
   * A reader without a subscription has no cursor: a successful no-op.
   */
  async markRead(me: bigint, channelId: bigint, messageId: bigint): Promise<Result<object>> {
    const g = await guard(this.ctx, me, channelId, "read");
    if (!g.ok) return g;
    const m = await this.#message(channelId, messageId);
    if (!m.ok) return m;
    if (!g.value.rel.subscribed) return ok({});
    await this.ctx.db
      .update(channelSubscriptions)
      .set({ readSeq: sql`greatest(${channelSubscriptions.readSeq}, ${m.value.seq})` })
      .where(and(eq(channelSubscriptions.channelId, channelId), eq(channelSubscriptions.userId, me)));
    this.ctx.announce({ channelId, action: UNREAD_ACTION, userIds: [me] });
    return ok({});
  }

  /** Counted once per user and message within the node's dedupe window (docs/channels.md); no row per view. */
  async view(me: bigint, channelId: bigint, messageId: bigint): Promise<Result<object>> {
    const g = await guard(this.ctx, me, channelId, "read");
    if (!g.ok) return g;
    const m = await this.#message(channelId, messageId);
    if (!m.ok) return m;
    if (!this.#views.first(me, messageId)) return ok({});
    await this.ctx.db.transaction(async (tx) => {
      await tx.update(channelMessages).set({ viewCount: sql`${channelMessages.viewCount} + 1` }).where(eq(channelMessages.id, messageId));
      await bumpDaily(tx, channelId, utcDay(this.ctx.now()), "views");
    });
    return ok({});
  }

  /** Idempotent per user, message and type. */
  async react(me: bigint, channelId: bigint, messageId: bigint, type: string): Promise<Result<object>> {
    return this.#reaction(me, channelId, messageId, type, 1);
  }

  async unreact(me: bigint, channelId: bigint, messageId: bigint, type: string): Promise<Result<object>> {
    return this.#reaction(me, channelId, messageId, type, -1);
  }

  async #reaction(me: bigint, channelId: bigint, messageId: bigint, type: string, by: 1 | -1): Promise<Result<object>> {
    const g = await guard(this.ctx, me, channelId, "read");
    if (!g.ok) return g;
    const m = await this.#message(channelId, messageId);
    if (!m.ok) return m;
    if (by === 1 && m.value.revokedAtUs !== null) return fail("channel_message_revoked", "message was revoked");
    const mine = and(eq(channelReactions.messageId, messageId), eq(channelReactions.userId, me));
    try {
      await this.ctx.db.transaction(async (tx) => {
        const changed =
          by === 1
            ? await tx.insert(channelReactions).values({ messageId, userId: me, reactionType: type, createdAt: this.ctx.now() }).onConflictDoNothing().returning()
            : await tx.delete(channelReactions).where(and(mine, eq(channelReactions.reactionType, type))).returning();
        if (!changed.length) return;
        if (by === 1) {
          const [held] = await tx.select({ n: sql<number>`count(*)::int` }).from(channelReactions).where(mine);
          if (held!.n > MAX_REACTIONS_PER_USER) throw new TooManyReactions();
        }
        await tx
          .update(channelMessages)
          .set({ reactionCount: sql`greatest(${channelMessages.reactionCount} + ${by}, 0)` })
          .where(eq(channelMessages.id, messageId));
        await bumpDaily(tx, channelId, utcDay(this.ctx.now()), "reactions", by);
      });
    } catch (e) {
      if (e instanceof TooManyReactions) return fail("bad_request", `at most ${MAX_REACTIONS_PER_USER} reaction types per user on a message`);
      throw e;
    }
    return ok({});
  }

  /** Managers of role 1–2 and the creator edit any message; role 3 only its own. */
  async #editable(me: bigint, channelId: bigint, messageId: bigint): Promise<Result<MessageRow>> {
    const g = await guard(this.ctx, me, channelId, "publish");
    if (!g.ok) return g;
    const m = await this.#message(channelId, messageId);
    if (!m.ok) return m;
    if (m.value.authorId !== me) {
      const any = await guard(this.ctx, me, channelId, "edit_any");
      if (!any.ok) return any;
    }
    if (m.value.revokedAtUs !== null) return fail("channel_message_revoked", "message was revoked");
    return m;
  }

  /** channel_message_edited {channel_id, message_id, seq, msg_type, content, payload, edited_at (RFC 3339 µs)} to online subscribers. */
  async edit(me: bigint, channelId: bigint, messageId: bigint, edit: MessageEdit): Promise<Result<MessageJson>> {
    const m = await this.#editable(me, channelId, messageId);
    if (!m.ok) return m;
    const at = nowMicros(this.ctx.now());
    const [row] = await this.ctx.db
      .update(channelMessages)
      .set({
        content: edit.content,
        ...(edit.msgType !== undefined ? { msgType: edit.msgType } : {}),
        ...(edit.payload !== undefined ? { payload: edit.payload } : {}),
        editedAtUs: at,
      })
      .where(and(eq(channelMessages.id, messageId), sql`${channelMessages.revokedAtUs} is null`))
      .returning();
    if (!row) return fail("channel_message_revoked", "message was revoked");
    const json = messageJson(row);
    this.ctx.announce({
      channelId,
      action: "channel_message_edited",
      payload: stringifyJson({
        channel_id: channelId,
        message_id: messageId,
        seq: row.seq,
        msg_type: row.msgType,
        content: row.content,
        payload: json.payload,
        editor_uid: me,
        edited_at: rfc3339Micro(at),
      }),
    });
    return ok(json);
  }

  /**
   * The message stays as a tombstone (its seq, no content), so the timeline
   * and the unread count keep agreeing: a revoked message still counts as
   * unread until read past. channel_message_revoked {channel_id, message_id, seq, revoked_at} goes out.
   */
  async revoke(me: bigint, channelId: bigint, messageId: bigint): Promise<Result<object>> {
    const m = await this.#editable(me, channelId, messageId);
    if (!m.ok) return m;
    const at = nowMicros(this.ctx.now());
    const [row] = await this.ctx.db
      .update(channelMessages)
      .set({ revokedAtUs: at })
      .where(and(eq(channelMessages.id, messageId), sql`${channelMessages.revokedAtUs} is null`))
      .returning({ seq: channelMessages.seq });
    if (!row) return fail("channel_message_revoked", "message was revoked");
    this.ctx.announce({
      channelId,
      action: "channel_message_revoked",
      payload: stringifyJson({ channel_id: channelId, message_id: messageId, seq: row.seq, revoker_uid: me, revoked_at: rfc3339Micro(at) }),
    });
    return ok({ message_id: messageId, revoked_at: Number(at / 1000n) });
  }
}
