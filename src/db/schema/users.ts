import { sql } from "drizzle-orm";
import { index, pgTable, primaryKey, smallint, text, uniqueIndex } from "drizzle-orm/pg-core";
import { id, ms, nowMs } from "./columns.ts";

export const users = pgTable(
  "users",
  {
    id: id("id").primaryKey(),
    account: text("account").notNull(),
    passwordHash: text("password_hash").notNull(),
    nickname: text("nickname").notNull().default(""),
    avatar: text("avatar").notNull().default(""),
    description: text("description").notNull().default(""),
    /** 0 human, 1 AI assistant, 2 official bot (spec §2.9). */
    accountType: smallint("account_type").notNull().default(0),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
    updatedAt: ms("updated_at").notNull().$defaultFn(nowMs),
    /** Set when an account-logout request has run its grace period out. */
    deletedAt: ms("deleted_at"),
    /** Set by an admin (docs/accounts.md): login refused, every token and socket cut. */
    suspendedAt: ms("suspended_at"),
    /** Who may find the user by search: everyone (account or nickname), account (exact account only), nobody. */
    searchableBy: text("searchable_by").notNull().default("everyone"),
  },
  (t) => [
    uniqueIndex("users_account_uq").on(t.account),
    // Nickname prefix search (docs/accounts.md): lower(nickname) LIKE 'prefix%' of searchable live users.
    index("users_nickname_search_idx")
      .on(sql`lower(${t.nickname}) text_pattern_ops`)
      .where(sql`${t.searchableBy} = 'everyone' and ${t.deletedAt} is null`),
    index("users_account_type_idx").on(t.accountType).where(sql`${t.accountType} <> 0`),
  ],
);

/**
 * user_device (spec §2.10): one row per device a user has signed in from.
 * trust_state is the owner's own statement about the device; status 0 / -1
 * mean revoked / destroyed.
 */
export const userDevices = pgTable(
  "user_device",
  {
    userId: id("user_id").notNull(),
    deviceId: text("device_id").notNull(),
    deviceType: text("device_type").notNull().default(""),
    trustState: text("trust_state").notNull().default("unverified"),
    status: smallint("status").notNull().default(1),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
    lastSeenAt: ms("last_seen_at").notNull().$defaultFn(nowMs),
    /** The owner's name for the device (docs/accounts.md "My devices"); "" until renamed. */
    name: text("name").notNull().default(""),
  },
  (t) => [primaryKey({ columns: [t.userId, t.deviceId] })],
);

/** Account-logout requests (§4.1 apply_logout / cancel_logout). */
export const accountLogouts = pgTable("account_logout", {
  userId: id("user_id").primaryKey(),
  reason: text("reason").notNull().default(""),
  requestedAt: ms("requested_at").notNull(),
  deleteAfterAt: ms("delete_after_at").notNull(),
});
