import { and, eq, sql } from "drizzle-orm";
import { channelSubscriptions, channels } from "../../db/schema/channels.ts";
import { fail, ok, type Result } from "../errors.ts";
import { decide, tupleKind, type AccessTuple } from "./access.ts";
import { bumpDaily, CHANNEL_COLUMNS, channelRow, featureOn, guard, relationColumns, relationOf, utcDay, type ChannelContext } from "./context.ts";
import { channelJson } from "./json.ts";

export interface ChannelInput {
  readonly name: string;
  readonly visibility: number;
  readonly accessType: number;
  readonly joinPolicy: number;
  readonly description?: string;
  readonly avatar?: string;
  readonly customId?: string;
  readonly tags?: string[];
  readonly price?: number;
  readonly currency?: string;
}

export type ChannelEdit = Partial<Pick<ChannelInput, "name" | "description" | "avatar" | "tags" | "price" | "currency">>;

/** A cursor page: `cursor` is the last id of this page, null when there is nothing after it. */
export interface CursorPage<T> {
  list: T[];
  cursor: bigint | null;
  limit: number;
}

export function cursorPage<T>(rows: T[], limit: number, idOf: (row: T) => bigint): CursorPage<T> {
  const more = rows.length > limit;
  const list = more ? rows.slice(0, limit) : rows;
  return { list, cursor: more ? idOf(list[list.length - 1]!) : null, limit };
}

/**
 * A text-search query from a keyword: each word a prefix match, all words
 * required. Operator characters are dropped so no input is a syntax error.
 */
export function searchQuery(keyword: string): string | undefined {
  const words = keyword
    .split(/\s+/)
    .map((w) => w.replace(/[&|!():*<>'\\"]/g, ""))
    .filter(Boolean)
    .slice(0, 8);
  return words.length ? words.map((w) => `'${w}':*`).join(" & ") : undefined;
}

/** Channels, subscriptions and the lists around them (spec §4.3). */
export class ChannelService {
  constructor(private readonly ctx: ChannelContext) {}

  async create(me: bigint, input: ChannelInput): Promise<Result<ReturnType<typeof channelJson>>> {
    const tuple: AccessTuple = { visibility: input.visibility, accessType: input.accessType, joinPolicy: input.joinPolicy };
    if (!tupleKind(tuple)) {
      return fail("bad_request", "visibility/access_type/join_policy must be one of 0/0/0, 1/0/1, 0/1/3, 1/1/3");
    }
    const now = this.ctx.now();
    const id = this.ctx.ids.next();
    const inserted = await this.ctx.db
      .insert(channels)
      .values({
        id,
        ownerId: me,
        name: input.name,
        description: input.description ?? "",
        avatar: input.avatar ?? "",
        customId: input.customId || null,
        tags: input.tags ?? [],
        visibility: input.visibility,
        accessType: input.accessType,
        joinPolicy: input.joinPolicy,
        price: input.accessType === 1 ? (input.price ?? 0) : 0,
        currency: input.currency ?? "CNY",
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing()
      .returning({ id: channels.id });
    if (!inserted.length) return fail("conflict", "custom_id is taken");
    return this.get(me, id);
  }

  async get(me: bigint, channelId: bigint): Promise<Result<ReturnType<typeof channelJson>>> {
    const g = await guard(this.ctx, me, channelId, "see");
    return g.ok ? ok(channelJson(g.value.channel, g.value.rel)) : g;
  }

  async getByCustomId(me: bigint, customId: string): Promise<Result<ReturnType<typeof channelJson>>> {
    const [row] = await this.ctx.db
      .select({ id: channels.id })
      .from(channels)
      .where(and(eq(channels.customId, customId), sql`${channels.deletedAt} is null`));
    return row ? this.get(me, row.id) : fail("channel_not_found", "channel not found");
  }

  async update(me: bigint, channelId: bigint, edit: ChannelEdit): Promise<Result<ReturnType<typeof channelJson>>> {
    const g = await guard(this.ctx, me, channelId, "update");
    if (!g.ok) return g;
    const set: Partial<typeof channels.$inferInsert> = { updatedAt: this.ctx.now() };
    if (edit.name !== undefined) set.name = edit.name;
    if (edit.description !== undefined) set.description = edit.description;
    if (edit.avatar !== undefined) set.avatar = edit.avatar;
    if (edit.tags !== undefined) set.tags = edit.tags;
    if (edit.price !== undefined && g.value.channel.accessType === 1) set.price = edit.price;
    if (edit.currency !== undefined) set.currency = edit.currency;
    await this.ctx.db.update(channels).set(set).where(eq(channels.id, channelId));
    return this.get(me, channelId);
  }

  /** Soft delete: every channel route answers channel_not_found from then on; rows stay for the records. */
  async delete(me: bigint, channelId: bigint): Promise<Result<object>> {
    const g = await guard(this.ctx, me, channelId, "delete");
    if (!g.ok) return g;
    await this.ctx.db.update(channels).set({ deletedAt: this.ctx.now(), customId: null }).where(eq(channels.id, channelId));
    return ok({});
  }

  /** Idempotent. The read cursor starts at the newest message: what came before is not unread. */
  async subscribe(me: bigint, channelId: bigint): Promise<Result<object>> {
    const g = await guard(this.ctx, me, channelId, "subscribe");
    if (!g.ok) return g;
    if (g.value.rel.subscribed) return ok({});
    await subscribe(this.ctx, me, channelId);
    return ok({});
  }

  /**
   * Always allowed and always {}: leaving reveals nothing and must work even
   * on a channel whose tuple now hides it; an unknown channel is a no-op too
   * (so the answer does not tell which private channels exist).
   */
  async unsubscribe(me: bigint, channelId: bigint): Promise<Result<object>> {
    await unsubscribe(this.ctx, me, channelId);
    return ok({});
  }

  async subscribed(me: bigint, cursor: bigint, limit: number) {
    const rows = await this.ctx.store.rows<Record<string, unknown>>(sql`
      select ${CHANNEL_COLUMNS}, s.read_seq, s.subscribed_at from channel_subscription s
      join channel c on c.id = s.channel_id and c.deleted_at is null
      where s.user_id = ${me} and s.channel_id > ${cursor} order by s.channel_id limit ${limit + 1}`);
    const page = cursorPage(rows, limit, (r) => BigInt(r.id as bigint));
    return ok({
      ...page,
      list: page.list.map((r) => {
        const c = channelRow(r);
        const readSeq = Number(r.read_seq);
        return { ...channelJson(c), read_seq: readSeq, unread_count: Math.max(0, c.lastSeq - readSeq), subscribed_at: Number(r.subscribed_at) };
      }),
    });
  }

  /** Channels the caller created or administers (at most 1000, newest first). */
  async managed(me: bigint) {
    const rows = await this.ctx.store.rows<Record<string, unknown>>(sql`
      select ${CHANNEL_COLUMNS}, a.role as admin_role from channel c
      left join channel_admin a on a.channel_id = c.id and a.user_id = ${me}
      where c.deleted_at is null and (c.owner_id = ${me} or a.user_id is not null)
      order by c.id desc limit 1000`);
    return ok({
      list: rows.map((r) => {
        const c = channelRow(r);
        return channelJson(c, relationOf(me, c, { ...r, subscribed: false }));
      }),
    });
  }

  /** §2.6 summary: every active subscription with its count, the same source as the pushes. */
  async unreadSummary(me: bigint) {
    const rows = await this.ctx.store.rows<{ channel_id: unknown; unread: unknown }>(sql`
      select s.channel_id, greatest(c.last_seq - s.read_seq, 0) as unread from channel_subscription s
      join channel c on c.id = s.channel_id and c.deleted_at is null
      where s.user_id = ${me} order by unread desc, s.channel_id asc`);
    let total = 0;
    let withUnread = 0;
    const list = rows.map((r) => {
      const n = Number(r.unread);
      total += n;
      if (n > 0) withUnread++;
      return { channel_id: BigInt(r.channel_id as bigint), unread_count: n };
    });
    return ok({ total_unread: total, unread_channels: withUnread, channels: list });
  }

  /**
   * Name and description by text search (prefix per word), or an exact tag.
   * Only channels the caller may see: public ones, and private ones it is
   * related to (docs/channels.md); answers carry the channel object, never content.
   */
  async search(me: bigint, keyword: string, limit: number): Promise<Result<{ list: ReturnType<typeof channelJson>[] }>> {
    const q = searchQuery(keyword);
    if (!q) return ok({ list: [] }); // nothing searchable in it (operators only)
    // Related rows only for private channels: the access function decides on each (#visible).
    const rows = await this.ctx.store.rows<Record<string, unknown>>(sql`select * from (
        select ${CHANNEL_COLUMNS}, ${relationColumns(me, this.ctx.now())} from channel c
        where c.deleted_at is null
          and (to_tsvector('simple', c.name || ' ' || c.description) @@ to_tsquery('simple', ${q}) or c.tags @> array[${keyword.trim()}]::text[])
      ) r
      where r.visibility = 0 or r.owner_id = ${me} or r.admin_role is not null or r.subscribed or r.purchased or r.invited
      order by r.subscriber_count desc, r.id desc limit ${limit}`);
    return ok({ list: this.#visible(me, rows) });
  }

  /** Public channels (a valid public tuple) by tag, most subscribed first. */
  async discover(me: bigint, category: string | undefined, limit: number): Promise<Result<{ list: ReturnType<typeof channelJson>[] }>> {
    const on = featureOn(this.ctx, "channel_discover");
    if (!on.ok) return on;
    const rows = await this.ctx.store.rows<Record<string, unknown>>(sql`
      select ${CHANNEL_COLUMNS}, ${relationColumns(me, this.ctx.now())} from channel c
      where c.deleted_at is null and c.visibility = 0
        ${category ? sql`and c.tags @> array[${category}]::text[]` : sql``}
      order by c.subscriber_count desc, c.id desc limit ${limit}`);
    return ok({ list: this.#visible(me, rows).filter((c) => c.visibility === 0) });
  }

  /** The one access function has the last word on every listed row. */
  #visible(me: bigint, rows: Record<string, unknown>[]) {
    const out: ReturnType<typeof channelJson>[] = [];
    for (const r of rows) {
      const c = channelRow(r);
      const rel = relationOf(me, c, r);
      if (decide(c, rel, "see") === "allow") out.push(channelJson(c, rel));
    }
    return out;
  }
}

/** Inserts the subscription (cursor at the newest message) and counts it; a no-op when it exists. */
export async function subscribe(ctx: ChannelContext, me: bigint, channelId: bigint): Promise<void> {
  const now = ctx.now();
  await ctx.db.transaction(async (tx) => {
    const added = await tx.execute(sql`insert into channel_subscription (channel_id, user_id, read_seq, subscribed_at)
      select id, ${me}, last_seq, ${now} from channel where id = ${channelId}
      on conflict do nothing returning user_id`);
    if (!(Array.isArray(added) ? added : (added as { rows: unknown[] }).rows).length) return;
    await tx.update(channels).set({ subscriberCount: sql`${channels.subscriberCount} + 1` }).where(eq(channels.id, channelId));
    await bumpDaily(tx, channelId, utcDay(now), "subscribes");
  });
}

export async function unsubscribe(ctx: ChannelContext, me: bigint, channelId: bigint): Promise<boolean> {
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const gone = await tx
      .delete(channelSubscriptions)
      .where(and(eq(channelSubscriptions.channelId, channelId), eq(channelSubscriptions.userId, me)))
      .returning({ userId: channelSubscriptions.userId });
    if (!gone.length) return false;
    await tx.update(channels).set({ subscriberCount: sql`greatest(${channels.subscriberCount} - 1, 0)` }).where(eq(channels.id, channelId));
    await bumpDaily(tx, channelId, utcDay(now), "unsubscribes");
    return true;
  });
}
