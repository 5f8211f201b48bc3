import { integer, pgTable, text } from "drizzle-orm/pg-core";
import { id, ms, nowMs } from "./columns.ts";

/** Generated-once values shared by every node on this database (dev secrets, keys). */
export const settings = pgTable("settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  createdAt: ms("created_at").notNull().$defaultFn(nowMs),
});

/** Node-id leases: nodes started without IBIS_NODE_ID take the lowest free or expired slot. */
export const nodeLeases = pgTable("node_lease", {
  nodeId: integer("node_id").primaryKey(),
  holder: text("holder").notNull(),
  expiresAt: ms("expires_at").notNull(),
});

/** Admin console accounts (/api/adm). Permissions come from the role (src/domain/admin/roles.ts). */
export const admins = pgTable("admin_user", {
  id: id("id").primaryKey(),
  account: text("account").notNull().unique(),
  passwordHash: text("password_hash").notNull(),
  role: text("role").notNull(),
  createdAt: ms("created_at").notNull().$defaultFn(nowMs),
});
