import { sql } from "drizzle-orm";
import { ok, type Result } from "../errors.ts";
import { guard, utcDay, type ChannelContext } from "./context.ts";

export const MAX_STAT_DAYS = 90;

const DAY_MS = 86_400_000;
const isoDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** Channel statistics for its managers (creator, admin roles 1–3). */
export class ChannelStatsService {
  constructor(private readonly ctx: ChannelContext) {}

  async stats(me: bigint, channelId: bigint): Promise<Result<Record<string, unknown>>> {
    const g = await guard(this.ctx, me, channelId, "stats");
    if (!g.ok) return g;
    const [m] = await this.ctx.store.rows<Record<string, unknown>>(sql`select
        count(*) filter (where revoked_at_us is null) as messages,
        count(*) filter (where revoked_at_us is not null) as revoked,
        coalesce(sum(view_count), 0) as views, coalesce(sum(reaction_count), 0) as reactions
      from channel_message where channel_id = ${channelId}`);
    const [o] = await this.ctx.store.rows<Record<string, unknown>>(sql`select
        count(*) filter (where status = 'paid') as paid_orders, coalesce(sum(amount) filter (where status = 'paid'), 0) as revenue,
        (select count(*) from channel_admin where channel_id = ${channelId}) as admins
      from channel_order where channel_id = ${channelId}`);
    const c = g.value.channel;
    return ok({
      channel_id: c.id,
      subscriber_count: c.subscriberCount,
      admin_count: Number(o!.admins),
      message_count: Number(m!.messages),
      revoked_count: Number(m!.revoked),
      last_seq: c.lastSeq,
      view_count: Number(m!.views),
      reaction_count: Number(m!.reactions),
      paid_order_count: Number(o!.paid_orders),
      revenue: Number(o!.revenue),
      currency: c.currency,
    });
  }

  /** The last `days` UTC days, newest first, zero days included: messages from the timeline, the rest from the daily counters. */
  async daily(me: bigint, channelId: bigint, days: number) {
    const g = await guard(this.ctx, me, channelId, "stats");
    if (!g.ok) return g;
    const today = utcDay(this.ctx.now());
    const first = today - days + 1;
    const counters = await this.ctx.store.rows<Record<string, unknown>>(sql`
      select day, views, reactions, subscribes, unsubscribes from channel_daily_stat
      where channel_id = ${channelId} and day >= ${first}`);
    const messages = await this.ctx.store.rows<{ day: unknown; n: unknown }>(sql`
      select floor(created_at / ${DAY_MS})::int as day, count(*) as n from channel_message
      where channel_id = ${channelId} and created_at >= ${first * DAY_MS} group by 1`);
    const byDay = new Map(counters.map((r) => [Number(r.day), r]));
    const msgs = new Map(messages.map((r) => [Number(r.day), Number(r.n)]));
    const list = [];
    for (let d = today; d >= first; d--) {
      const r = byDay.get(d);
      list.push({
        date: isoDay(d),
        day_ts: d * DAY_MS,
        messages: msgs.get(d) ?? 0,
        views: Number(r?.views ?? 0),
        reactions: Number(r?.reactions ?? 0),
        subscribes: Number(r?.subscribes ?? 0),
        unsubscribes: Number(r?.unsubscribes ?? 0),
      });
    }
    return ok({ list });
  }
}
