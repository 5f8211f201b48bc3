import { index, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { id, ms } from "./columns.ts";

/**
 * Per-recipient inbox of C2S and S2C messages: one row per (user, message)
 * the user should see — the receiver, and a C2S's sender (for their other
 * devices). Written in the same statement as `messages`. A C2C message has
 * none (its row's sides say whose it is; rows stored before 0014 have them),
 * a C2G message neither (its group's timeline). A device's pending set is
 * its user's inbox and C2C messages from the device floor up, minus its
 * marks, plus its timelines' entries (docs/delivery.md).
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

/**
 * Each running node's watermark (src/delivery/floors.ts, docs/delivery.md
 * "Floors"): no message with a smaller id can still commit from that node.
 * Written at start, every second, removed at a clean stop; the least of them
 * bounds how far a device's floor moves past what it acknowledged.
 */
export const writerWatermarks = pgTable("writer_watermark", {
  instance: text("instance").primaryKey(),
  lowId: id("low_id").notNull(),
  seenAt: ms("seen_at").notNull(),
});
