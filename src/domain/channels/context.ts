import { sql } from "drizzle-orm";
import type { Db, Store } from "../../db/store.ts";
import type { IdGenerator } from "../../ids/tsid.ts";
import type { Logger } from "../../log.ts";
import { fail, ok, type Result } from "../errors.ts";
import type { Feature, FeatureMatrix } from "../features/matrix.ts";
import { decide, isAdminRole, type AccessTuple, type ChannelOp, type Relation } from "./access.ts";
import type { ChannelEvent } from "./fanout.ts";
import type { PaymentProvider } from "./payments.ts";

/** What every channel service holds. */
export interface ChannelContext {
  readonly store: Store;
  readonly db: Db;
  readonly ids: IdGenerator;
  readonly now: () => number;
  readonly log: Logger;
  readonly features: FeatureMatrix;
  /** Absent: `pay` answers payment_unavailable (production without a configured provider). */
  readonly payments: PaymentProvider | undefined;
  /** Sends an event to the online subscribers on every node (src/domain/channels/fanout.ts); never throws. */
  announce(event: ChannelEvent): void;
  readonly invitationTtlMs: number;
}

/** A live channel as the access checks and the answers need it. */
export interface ChannelRow extends AccessTuple {
  readonly id: bigint;
  readonly ownerId: bigint;
  readonly name: string;
  readonly description: string;
  readonly avatar: string;
  readonly customId: string | null;
  readonly tags: string[];
  readonly price: number;
  readonly currency: string;
  readonly lastSeq: number;
  readonly subscriberCount: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface Guarded {
  readonly channel: ChannelRow;
  readonly rel: Relation;
}

/** The channel columns, in the raw-SQL spelling of `channelRow` below. */
export const CHANNEL_COLUMNS = sql.raw(
  `c.id, c.owner_id, c.name, c.description, c.avatar, c.custom_id, c.tags, c.visibility, c.access_type, c.join_policy,
   c.price, c.currency, c.last_seq, c.subscriber_count, c.created_at, c.updated_at`,
);

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** Tags as text[]: postgres.js gives an array, PGlite may give the literal. */
function tagsOf(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(String);
  if (typeof v === "string" && v.startsWith("{")) {
    const inner = v.slice(1, -1);
    return inner === "" ? [] : inner.split(",").map((s) => s.replace(/^"|"$/g, ""));
  }
  return [];
}

export function channelRow(r: Record<string, unknown>): ChannelRow {
  return {
    id: BigInt(r.id as bigint),
    ownerId: BigInt(r.owner_id as bigint),
    name: r.name as string,
    description: r.description as string,
    avatar: r.avatar as string,
    customId: (r.custom_id as string | null) ?? null,
    tags: tagsOf(r.tags),
    visibility: num(r.visibility),
    accessType: num(r.access_type),
    joinPolicy: num(r.join_policy),
    price: Number(r.price),
    currency: r.currency as string,
    lastSeq: Number(r.last_seq),
    subscriberCount: Number(r.subscriber_count),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** The caller's relation to each row of `channel c`, as columns (admin_role, subscribed, purchased, invited). */
export const relationColumns = (me: bigint, now: number) => sql`
  (select a.role from channel_admin a where a.channel_id = c.id and a.user_id = ${me}) as admin_role,
  exists (select 1 from channel_subscription s where s.channel_id = c.id and s.user_id = ${me}) as subscribed,
  exists (select 1 from channel_order o where o.user_id = ${me} and o.channel_id = c.id and o.status = 'paid') as purchased,
  exists (select 1 from channel_invitation i where i.invitee_id = ${me} and i.channel_id = c.id
          and (i.status = 'accepted' or (i.status = 'pending' and i.expires_at > ${now}))) as invited`;

export function relationOf(me: bigint, channel: ChannelRow, r: Record<string, unknown>): Relation {
  const role = num(r.admin_role);
  return {
    creator: channel.ownerId === me,
    role: isAdminRole(role) ? role : undefined,
    subscribed: r.subscribed === true,
    purchased: r.purchased === true,
    invited: r.invited === true,
  };
}

/** The channel (live) and the caller's relation to it, in one round trip. */
export async function loadWithRelation(ctx: ChannelContext, me: bigint, channelId: bigint): Promise<Guarded | undefined> {
  const [r] = await ctx.store.rows<Record<string, unknown>>(
    sql`select ${CHANNEL_COLUMNS}, ${relationColumns(me, ctx.now())} from channel c where c.id = ${channelId} and c.deleted_at is null`,
  );
  if (!r) return undefined;
  const channel = channelRow(r);
  return { channel, rel: relationOf(me, channel, r) };
}

/** The channel when the caller may do `op` on it: channel_not_found when hidden or gone, channel_access_denied otherwise. */
export async function guard(ctx: ChannelContext, me: bigint, channelId: bigint, op: ChannelOp): Promise<Result<Guarded>> {
  const g = await loadWithRelation(ctx, me, channelId);
  if (!g) return fail("channel_not_found", "channel not found");
  switch (decide(g.channel, g.rel, op)) {
    case "allow":
      return ok(g);
    case "hidden":
      return fail("channel_not_found", "channel not found");
    case "denied":
      return fail("channel_access_denied", "no access to this channel");
  }
}

/** feature_disabled when the matrix (§2.5) has `feature` off. */
export function featureOn(ctx: ChannelContext, feature: Feature): Result<void> {
  return ctx.features[feature] ? ok(undefined) : fail("feature_disabled", `feature ${feature} is disabled`);
}

/** Days since the epoch (UTC) for the daily counters. */
export const utcDay = (ms: number): number => Math.floor(ms / 86_400_000);

/** Bumps one daily counter of a channel (views, reactions, subscribes, unsubscribes). */
export function bumpDaily(
  db: Pick<Db, "execute">,
  channelId: bigint,
  day: number,
  column: "views" | "reactions" | "subscribes" | "unsubscribes",
  by = 1,
) {
  const col = sql.raw(column);
  return db.execute(sql`insert into channel_daily_stat (channel_id, day, ${col}) values (${channelId}, ${day}, ${by})
    on conflict (channel_id, day) do update set ${col} = channel_daily_stat.${col} + ${by}`);
}

/** A bigint list as one array parameter (`= any(${idArray(ids)}::bigint[])`), the same on both drivers. */
export const idArray = (ids: readonly bigint[]): string => `{${ids.join(",")}}`;
