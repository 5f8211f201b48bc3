import { sql } from "drizzle-orm";
import { index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { id, ms, nowMs } from "./columns.ts";

/**
 * One sign-in session per (user, device) (docs/auth.md "Revocation"): `gen`
 * is the generation every token of the device carries; bumping it revokes
 * them all at once. `refresh_jti` is the one refresh token of the session
 * that may still be used (rotation); presenting an older one of the same
 * generation is reuse and revokes the session. Device "" holds the tokens
 * of logins made without a device id.
 */
export const authSessions = pgTable(
  "auth_session",
  {
    userId: id("user_id").notNull(),
    deviceId: text("device_id").notNull(),
    gen: integer("gen").notNull().default(0),
    /** null: signed out (no refresh token of this session is accepted). */
    refreshJti: text("refresh_jti"),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
    updatedAt: ms("updated_at").notNull().$defaultFn(nowMs),
  },
  (t) => [primaryKey({ columns: [t.userId, t.deviceId] })],
);

/**
 * Admin console sessions, kept server-side: the cookie holds a random id,
 * the table its SHA-256 (a leaked table opens no session). Logout deletes
 * the row, so the old cookie stops working.
 */
export const adminSessions = pgTable(
  "admin_session",
  {
    idHash: text("id_hash").primaryKey(),
    adminId: id("admin_id").notNull(),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
    expiresAt: ms("expires_at").notNull(),
  },
  (t) => [index("admin_session_admin_idx").on(t.adminId)],
);

/** Who did what in the admin console (append-only). `detail` is a JSON object. */
export const adminAudit = pgTable(
  "admin_audit",
  {
    id: id("id").primaryKey(),
    adminId: id("admin_id").notNull(),
    action: text("action").notNull(),
    targetUserId: id("target_user_id"),
    detail: text("detail").notNull().default("{}"),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [
    index("admin_audit_target_idx").on(t.targetUserId, t.id).where(sql`${t.targetUserId} is not null`),
    index("admin_audit_admin_idx").on(t.adminId, t.id),
  ],
);
