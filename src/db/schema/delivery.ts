import { index, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { id } from "./columns.ts";

/**
 * Per-recipient inbox: one row per (user, message) the user should see —
 * the receiver of a C2C/C2S/S2C, every member of a C2G, and the sender
 * (for their other devices). Written in the same transaction as `messages`.
 * A device's pending set is its user's inbox from the device floor up,
 * minus its marks (docs/delivery.md).
 */
export const inbox = pgTable(
  "inbox",
  {
    userId: id("user_id").notNull(),
    messageId: id("message_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.messageId] }), index("inbox_message_idx").on(t.messageId)],
);

/** Per-device delivery marks: this device acknowledged this message (batched writes). */
export const deliveryMarks = pgTable(
  "delivery_mark",
  {
    userId: id("user_id").notNull(),
    deviceId: text("device_id").notNull(),
    messageId: id("message_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.deviceId, t.messageId] }), index("delivery_mark_message_idx").on(t.messageId)],
);

/**
 * Per-device floor: inbox rows below `floor_id` are not pending for this
 * device. Set once when the device is first seen (its registration time), so a
 * new device does not inherit the whole history as pending.
 */
export const deliveryDevices = pgTable(
  "delivery_device",
  {
    userId: id("user_id").notNull(),
    deviceId: text("device_id").notNull(),
    floorId: id("floor_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.deviceId] })],
);
