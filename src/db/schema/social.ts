import { sql } from "drizzle-orm";
import { boolean, index, pgTable, primaryKey, smallint, text, uniqueIndex } from "drizzle-orm/pg-core";
import { id, ms, nowMs } from "./columns.ts";

/** Friend requests, one row per (requester, target); a new request reopens a rejected one. */
export const friendRequests = pgTable(
  "friend_request",
  {
    fromId: id("from_id").notNull(),
    toId: id("to_id").notNull(),
    /** JSON text of the request's free payload (greeting, source). */
    payload: text("payload").notNull().default("{}"),
    /** 0 pending, 1 accepted, 2 rejected. */
    status: smallint("status").notNull().default(0),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
    updatedAt: ms("updated_at").notNull().$defaultFn(nowMs),
  },
  (t) => [primaryKey({ columns: [t.fromId, t.toId] }), index("friend_request_to_idx").on(t.toId, t.status)],
);

/** Friendship, stored in both directions (two rows) so each side reads its own list by primary key. */
export const friends = pgTable(
  "friend",
  {
    userId: id("user_id").notNull(),
    friendId: id("friend_id").notNull(),
    remark: text("remark").notNull().default(""),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
  },
  (t) => [primaryKey({ columns: [t.userId, t.friendId] })],
);

/** `user_id` refuses C2C from `denied_user_id`. */
export const denylist = pgTable(
  "denylist",
  {
    userId: id("user_id").notNull(),
    deniedUserId: id("denied_user_id").notNull(),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
  },
  (t) => [primaryKey({ columns: [t.userId, t.deniedUserId] })],
);

export const groups = pgTable("im_group", {
  id: id("id").primaryKey(),
  ownerId: id("owner_id").notNull(),
  title: text("title").notNull().default(""),
  avatar: text("avatar").notNull().default(""),
  introduction: text("introduction").notNull().default(""),
  createdAt: ms("created_at").notNull().$defaultFn(nowMs),
  updatedAt: ms("updated_at").notNull().$defaultFn(nowMs),
  /** Set by dissolve; the member rows are deleted then. */
  dissolvedAt: ms("dissolved_at"),
});

/** Current members only; `role` is owner, manager or member. */
export const groupMembers = pgTable(
  "im_group_member",
  {
    groupId: id("group_id").notNull(),
    userId: id("user_id").notNull(),
    role: text("role").notNull().default("member"),
    joinedAt: ms("joined_at").notNull().$defaultFn(nowMs),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.userId] }), index("im_group_member_user_idx").on(t.userId, t.role)],
);

/**
 * Requests to join a group while self-join is off (docs/social.md "Joining"): one per (group, user) until an
 * owner or manager admits the user (by inviting them) or the request is withdrawn with the group.
 */
export const groupJoinRequests = pgTable(
  "im_group_join_request",
  {
    groupId: id("group_id").notNull(),
    userId: id("user_id").notNull(),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.userId] })],
);

/** Per-user server state of a conversation (§2.3): pin, and the deletion record. */
export const conversationStates = pgTable(
  "conversation_state",
  {
    userId: id("user_id").notNull(),
    /** c2c or c2g. */
    conversationType: text("conversation_type").notNull(),
    /** Peer user id (c2c) or group id (c2g). */
    conversationId: id("conversation_id").notNull(),
    isPinned: boolean("is_pinned").notNull().default(false),
    /** Deletion record: messages with server_ts ≤ this are hidden from the list; null = not deleted. */
    deletedTs: ms("deleted_ts"),
    updatedAt: ms("updated_at").notNull().$defaultFn(nowMs),
  },
  (t) => [primaryKey({ columns: [t.userId, t.conversationType, t.conversationId] })],
);

/** @-mentions in group messages (§2.4, §4.2). */
export const mentions = pgTable(
  "mention",
  {
    id: id("id").primaryKey(),
    /** Server id of the C2G message (messages.id). */
    msgId: id("msg_id").notNull(),
    /** The message's §2.8 id string (messages.client_id). */
    clientMsgId: text("client_msg_id").notNull().default(""),
    groupId: id("group_id").notNull(),
    fromId: id("from_id").notNull(),
    mentionedId: id("mentioned_id").notNull(),
    isRead: boolean("is_read").notNull().default(false),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
    readAt: ms("read_at"),
  },
  (t) => [
    uniqueIndex("mention_msg_user_uq").on(t.msgId, t.mentionedId),
    index("mention_user_idx").on(t.mentionedId, t.id),
    index("mention_unread_idx").on(t.mentionedId, t.groupId).where(sql`${t.isRead} = false`),
  ],
);
