/**
 * Broadcast channels (spec §2.6, §4.3; docs/channels.md). A channel is a
 * timeline: one row per message with a per-channel `seq` assigned in the
 * publishing transaction (`last_seq + 1` on the channel row, so seqs have no
 * gaps), and one subscription row per subscriber holding its read cursor.
 * Unread = channel.last_seq - subscription.read_seq: never a row per
 * subscriber per message.
 */
import { sql } from "drizzle-orm";
import { bigint, index, integer, pgTable, primaryKey, smallint, text, uniqueIndex } from "drizzle-orm/pg-core";
import { id, ms, nowMs } from "./columns.ts";

export const channels = pgTable(
  "channel",
  {
    id: id("id").primaryKey(),
    /** The creator (a manager above every admin role). */
    ownerId: id("owner_id").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    avatar: text("avatar").notNull().default(""),
    /** Unique among live channels when set. */
    customId: text("custom_id"),
    tags: text("tags").array().notNull().default(sql`'{}'::text[]`),
    /** The access tuple; null (missing) is stored as is and denied like any other unknown tuple. */
    visibility: smallint("visibility"),
    accessType: smallint("access_type"),
    joinPolicy: smallint("join_policy"),
    /** Price of a purchase in minor units (paid channels). */
    price: integer("price").notNull().default(0),
    currency: text("currency").notNull().default("CNY"),
    /** Highest message seq; the unread source together with subscription.read_seq. */
    lastSeq: bigint("last_seq", { mode: "number" }).notNull().default(0),
    subscriberCount: integer("subscriber_count").notNull().default(0),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
    updatedAt: ms("updated_at").notNull().$defaultFn(nowMs),
    deletedAt: ms("deleted_at"),
  },
  (t) => [
    uniqueIndex("channel_custom_id_uq").on(t.customId).where(sql`${t.customId} is not null and ${t.deletedAt} is null`),
    index("channel_owner_idx").on(t.ownerId),
    index("channel_tags_idx").using("gin", t.tags),
    // Search (docs/channels.md): PostgreSQL text search, core on PostgreSQL and PGlite alike.
    index("channel_search_idx").using("gin", sql`to_tsvector('simple', ${t.name} || ' ' || ${t.description})`),
  ],
);

export const channelMessages = pgTable(
  "channel_message",
  {
    id: id("id").primaryKey(),
    channelId: id("channel_id").notNull(),
    seq: bigint("seq", { mode: "number" }).notNull(),
    authorId: id("author_id").notNull(),
    msgType: text("msg_type").notNull(),
    content: text("content").notNull(),
    /** JSON text of the optional payload object. */
    payload: text("payload"),
    /** Idempotency key per author and channel. */
    requestId: text("request_id"),
    viewCount: integer("view_count").notNull().default(0),
    reactionCount: integer("reaction_count").notNull().default(0),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
    /** Microseconds UTC: the events carry them as RFC 3339 strings with microseconds (spec §2.1.3). */
    editedAtUs: bigint("edited_at_us", { mode: "bigint" }),
    revokedAtUs: bigint("revoked_at_us", { mode: "bigint" }),
  },
  (t) => [
    uniqueIndex("channel_message_seq_uq").on(t.channelId, t.seq),
    uniqueIndex("channel_message_request_uq").on(t.channelId, t.authorId, t.requestId).where(sql`${t.requestId} is not null`),
    index("channel_message_day_idx").on(t.channelId, t.createdAt),
  ],
);

/** One row per subscriber: the read cursor. */
export const channelSubscriptions = pgTable(
  "channel_subscription",
  {
    channelId: id("channel_id").notNull(),
    userId: id("user_id").notNull(),
    readSeq: bigint("read_seq", { mode: "number" }).notNull().default(0),
    subscribedAt: ms("subscribed_at").notNull().$defaultFn(nowMs),
  },
  (t) => [primaryKey({ columns: [t.channelId, t.userId] }), index("channel_subscription_user_idx").on(t.userId, t.channelId)],
);

/** Admins; role 1–3 (docs/channels.md says what each may do). The creator has no row. */
export const channelAdmins = pgTable(
  "channel_admin",
  {
    channelId: id("channel_id").notNull(),
    userId: id("user_id").notNull(),
    role: smallint("role").notNull(),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
  },
  (t) => [primaryKey({ columns: [t.channelId, t.userId] }), index("channel_admin_user_idx").on(t.userId)],
);

/** One row per user, message and reaction type: adding twice is a no-op; the message row keeps the count. */
export const channelReactions = pgTable(
  "channel_reaction",
  {
    messageId: id("message_id").notNull(),
    userId: id("user_id").notNull(),
    reactionType: text("reaction_type").notNull(),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
  },
  (t) => [primaryKey({ columns: [t.messageId, t.userId, t.reactionType] })],
);

/** Counters per channel and UTC day (days since the epoch); messages per day come from the timeline itself. */
export const channelDailyStats = pgTable(
  "channel_daily_stat",
  {
    channelId: id("channel_id").notNull(),
    day: integer("day").notNull(),
    views: integer("views").notNull().default(0),
    reactions: integer("reactions").notNull().default(0),
    subscribes: integer("subscribes").notNull().default(0),
    unsubscribes: integer("unsubscribes").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.channelId, t.day] })],
);

/** pending → accepted | rejected | expired (expired is read from expires_at, never written by a timer). */
export const channelInvitations = pgTable(
  "channel_invitation",
  {
    id: id("id").primaryKey(),
    channelId: id("channel_id").notNull(),
    inviterId: id("inviter_id").notNull(),
    inviteeId: id("invitee_id").notNull(),
    status: text("status").notNull().default("pending"),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
    expiresAt: ms("expires_at").notNull(),
    respondedAt: ms("responded_at"),
  },
  (t) => [
    index("channel_invitation_invitee_idx").on(t.inviteeId, t.channelId),
    index("channel_invitation_inviter_idx").on(t.inviterId),
  ],
);

/** created → paid | cancelled. */
export const channelOrders = pgTable(
  "channel_order",
  {
    orderNo: text("order_no").primaryKey(),
    channelId: id("channel_id").notNull(),
    userId: id("user_id").notNull(),
    amount: integer("amount").notNull(),
    currency: text("currency").notNull(),
    status: text("status").notNull().default("created"),
    provider: text("provider").notNull().default(""),
    /** The provider's reference for the charge. */
    transactionId: text("transaction_id"),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
    paidAt: ms("paid_at"),
    cancelledAt: ms("cancelled_at"),
  },
  (t) => [index("channel_order_user_idx").on(t.userId, t.channelId, t.status)],
);
