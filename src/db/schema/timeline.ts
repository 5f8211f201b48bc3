import { sql } from "drizzle-orm";
import { customType, index, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { id } from "./columns.ts";

/**
 * Conversation timelines (docs/delivery.md "Timelines"): a group message is
 * stored once, with a per-conversation sequence number assigned in the
 * statement that commits it. Members and their devices are tracked by
 * sequence numbers (join/leave spans, per-device cursors), never by a row per
 * recipient. `conv_id` is the group id.
 */
export const timeline = pgTable(
  "timeline",
  {
    messageId: id("message_id").primaryKey(),
    convId: id("conv_id").notNull(),
    /** 1, 2, 3 … per conversation, in commit order, without gaps. */
    seq: id("seq").notNull(),
  },
  (t) => [uniqueIndex("timeline_conv_seq_uq").on(t.convId, t.seq)],
);

/** The last sequence number given out per conversation (locked per batch: numbers follow commit order). */
export const timelineHeads = pgTable("timeline_head", {
  convId: id("conv_id").primaryKey(),
  lastSeq: id("last_seq").notNull(),
});

/**
 * Membership as sequence spans: a member sees `join_seq < seq ≤ leave_seq`
 * (no leave_seq: still a member). A member who leaves and joins again gets a
 * second span.
 */
export const timelineMembers = pgTable(
  "timeline_member",
  {
    convId: id("conv_id").notNull(),
    userId: id("user_id").notNull(),
    joinSeq: id("join_seq").notNull(),
    leaveSeq: id("leave_seq"),
  },
  (t) => [primaryKey({ columns: [t.convId, t.userId, t.joinSeq] }), index("timeline_member_user_idx").on(t.userId)],
);

/** Inclusive runs of sequence numbers, lowest first (PostgreSQL `int8multirange`). */
export type SeqRuns = [lo: bigint, hi: bigint][];

/** The text form `{[3,4),[6,9)}` (canonical: lower inclusive, upper exclusive) ⇄ inclusive runs. */
export const parseSeqRuns = (text: string): SeqRuns =>
  [...text.matchAll(/\[(-?\d+),(-?\d+)\)/g)].map((m) => [BigInt(m[1]!), BigInt(m[2]!) - 1n]);

const seqRuns = customType<{ data: SeqRuns; driverData: string }>({
  dataType: () => "int8multirange",
  fromDriver: (v) => parseSeqRuns(String(v)),
  toDriver: (runs) => `{${runs.map(([lo, hi]) => `[${lo},${hi}]`).join(",")}}`,
});

/**
 * A device's delivery state in one conversation: every `seq ≤ seq` is
 * acknowledged, and so are the numbers in `above` (acks past a hole), kept as
 * ranges so a hole that stays open costs one range, not one number per
 * message after it. Written in background batches, one row write per device
 * and conversation.
 */
export const timelineCursors = pgTable(
  "timeline_cursor",
  {
    userId: id("user_id").notNull(),
    deviceId: text("device_id").notNull(),
    convId: id("conv_id").notNull(),
    seq: id("seq").notNull(),
    above: seqRuns("above").notNull().default(sql`'{}'::int8multirange`),
  },
  (t) => [primaryKey({ columns: [t.userId, t.deviceId, t.convId] })],
);
