import { sql } from "drizzle-orm";
import { index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { id, ms } from "./columns.ts";

/**
 * Every stored message (spec §2.8), C2C, C2G, C2S and S2C alike. `id` is the
 * server-minted tsid (ordering, paging, marks); `client_id` is the §2.8 id
 * string the sender chose, the idempotency key per sender.
 * `payload` holds the payload's JSON text (or the Base64 ciphertext string
 * when encrypted) exactly as it will be sent: no re-encoding per delivery.
 */
export const messages = pgTable(
  "messages",
  {
    id: id("id").primaryKey(),
    clientId: text("client_id").notNull(),
    /** C2C, C2G, C2S or S2C. */
    chatType: text("chat_type").notNull(),
    /** Sender; null for S2C. */
    fromId: id("from_id"),
    /**
     * The device that sent it (null for S2C and for rows stored before 0014). A C2C message has no inbox rows:
     * it is pending for the receiver's devices and the sender's other devices (docs/delivery.md "C2C").
     */
    fromDevice: text("from_device"),
    /** Receiving user (C2C, C2S, S2C) or group (C2G). */
    toId: id("to_id").notNull(),
    msgType: text("msg_type").notNull().default(""),
    action: text("action").notNull().default(""),
    /** JSON text of the payload: an object, or the Base64 ciphertext as a JSON string literal (then `e2ee` is set). */
    payload: text("payload").notNull(),
    /** JSON text of the e2ee metadata; null when not encrypted. */
    e2ee: text("e2ee"),
    /** Client creation time as sent (RFC 3339 string or ms), JSON text; null when absent. */
    createdAt: text("created_at"),
    serverTs: ms("server_ts").notNull(),
  },
  (t) => [
    // C2S and S2C ids per sender; a C2C or C2G id is unique in its conversation (the tsid indexes below), not
    // per sender across conversations: one B-tree entry fewer per C2C and C2G message (bench/FINDINGS.md).
    uniqueIndex("messages_sender_client_id_uq")
      .on(sql`coalesce(${t.fromId}, 0)`, t.clientId)
      .where(sql`${t.chatType} in ('C2S', 'S2C')`),
    // C2C history and conversation views (a group's are read through its timeline).
    index("messages_c2c_pair_idx")
      .on(sql`least(${t.fromId}, ${t.toId})`, sql`greatest(${t.fromId}, ${t.toId})`, t.id)
      .where(sql`${t.chatType} = 'C2C'`),
    // A user's C2C as sender and as receiver, by server id: what a device has pending (its inbox, in place of
    // inbox rows: docs/delivery.md "C2C") and the conversation list (src/domain/social/conversations.ts).
    index("messages_c2c_from_idx").on(t.fromId, t.id).where(sql`${t.chatType} = 'C2C'`),
    index("messages_c2c_to_idx").on(t.toId, t.id).where(sql`${t.chatType} = 'C2C'`),
    // Acknowledgements name a message by its §2.8 id or (frame ACK) by its tsid segment, and the id's TYPE is the
    // chat type: every lookup says `chat_type = TYPE and split_part(client_id, '.', 2) = tsid`, so an ack of an
    // unknown id is one index probe. C2C and C2G are served by their unique indexes below (no extra index on
    // the message hot path), C2S and S2C by this one.
    index("messages_tsid_idx").on(sql`split_part(${t.clientId}, '.', 2)`, t.clientId).where(sql`${t.chatType} in ('C2S', 'S2C')`),
    // A tsid names one message per conversation: an ack (text, protobuf or frame form) cannot be steered from one
    // sender's message to another's by reusing its id (docs/delivery.md "Acks").
    // The tsid leads, so the planner never takes these for the conversation indexes above.
    uniqueIndex("messages_c2g_tsid_uq").on(sql`split_part(${t.clientId}, '.', 2)`, t.toId).where(sql`${t.chatType} = 'C2G'`),
    uniqueIndex("messages_c2c_tsid_uq")
      .on(sql`split_part(${t.clientId}, '.', 2)`, sql`least(${t.fromId}, ${t.toId})`, sql`greatest(${t.fromId}, ${t.toId})`)
      .where(sql`${t.chatType} = 'C2C'`),
  ],
);
