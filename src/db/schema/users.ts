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
  },
  (t) => [
    uniqueIndex("users_account_uq").on(t.account),
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
