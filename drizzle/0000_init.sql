CREATE TABLE "account_logout" (
	"user_id" bigint PRIMARY KEY NOT NULL,
	"reason" text DEFAULT '' NOT NULL,
	"requested_at" bigint NOT NULL,
	"delete_after_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "user_device" (
	"user_id" bigint NOT NULL,
	"device_id" text NOT NULL,
	"device_type" text DEFAULT '' NOT NULL,
	"trust_state" text DEFAULT 'unverified' NOT NULL,
	"status" smallint DEFAULT 1 NOT NULL,
	"created_at" bigint NOT NULL,
	"last_seen_at" bigint NOT NULL,
	CONSTRAINT "user_device_user_id_device_id_pk" PRIMARY KEY("user_id","device_id")
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" bigint PRIMARY KEY NOT NULL,
	"account" text NOT NULL,
	"password_hash" text NOT NULL,
	"nickname" text DEFAULT '' NOT NULL,
	"avatar" text DEFAULT '' NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"account_type" smallint DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"deleted_at" bigint
);
--> statement-breakpoint
CREATE TABLE "admin_user" (
	"id" bigint PRIMARY KEY NOT NULL,
	"account" text NOT NULL,
	"password_hash" text NOT NULL,
	"role" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "admin_user_account_unique" UNIQUE("account")
);
--> statement-breakpoint
CREATE TABLE "node_lease" (
	"node_id" integer PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"id" bigint PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"chat_type" text NOT NULL,
	"from_id" bigint,
	"to_id" bigint NOT NULL,
	"msg_type" text DEFAULT '' NOT NULL,
	"action" text DEFAULT '' NOT NULL,
	"payload" text NOT NULL,
	"e2ee" text,
	"created_at" text,
	"server_ts" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "conversation_state" (
	"user_id" bigint NOT NULL,
	"conversation_type" text NOT NULL,
	"conversation_id" bigint NOT NULL,
	"is_pinned" boolean DEFAULT false NOT NULL,
	"deleted_ts" bigint,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "conversation_state_user_id_conversation_type_conversation_id_pk" PRIMARY KEY("user_id","conversation_type","conversation_id")
);
--> statement-breakpoint
CREATE TABLE "denylist" (
	"user_id" bigint NOT NULL,
	"denied_user_id" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "denylist_user_id_denied_user_id_pk" PRIMARY KEY("user_id","denied_user_id")
);
--> statement-breakpoint
CREATE TABLE "friend_request" (
	"from_id" bigint NOT NULL,
	"to_id" bigint NOT NULL,
	"payload" text DEFAULT '{}' NOT NULL,
	"status" smallint DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "friend_request_from_id_to_id_pk" PRIMARY KEY("from_id","to_id")
);
--> statement-breakpoint
CREATE TABLE "friend" (
	"user_id" bigint NOT NULL,
	"friend_id" bigint NOT NULL,
	"remark" text DEFAULT '' NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "friend_user_id_friend_id_pk" PRIMARY KEY("user_id","friend_id")
);
--> statement-breakpoint
CREATE TABLE "im_group_member" (
	"group_id" bigint NOT NULL,
	"user_id" bigint NOT NULL,
	"role" text DEFAULT 'member' NOT NULL,
	"joined_at" bigint NOT NULL,
	CONSTRAINT "im_group_member_group_id_user_id_pk" PRIMARY KEY("group_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "im_group" (
	"id" bigint PRIMARY KEY NOT NULL,
	"owner_id" bigint NOT NULL,
	"title" text DEFAULT '' NOT NULL,
	"avatar" text DEFAULT '' NOT NULL,
	"introduction" text DEFAULT '' NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"dissolved_at" bigint
);
--> statement-breakpoint
CREATE TABLE "mention" (
	"id" bigint PRIMARY KEY NOT NULL,
	"msg_id" bigint NOT NULL,
	"client_msg_id" text DEFAULT '' NOT NULL,
	"group_id" bigint NOT NULL,
	"from_id" bigint NOT NULL,
	"mentioned_id" bigint NOT NULL,
	"is_read" boolean DEFAULT false NOT NULL,
	"created_at" bigint NOT NULL,
	"read_at" bigint
);
--> statement-breakpoint
CREATE TABLE "delivery_device" (
	"user_id" bigint NOT NULL,
	"device_id" text NOT NULL,
	"floor_id" bigint NOT NULL,
	CONSTRAINT "delivery_device_user_id_device_id_pk" PRIMARY KEY("user_id","device_id")
);
--> statement-breakpoint
CREATE TABLE "delivery_mark" (
	"user_id" bigint NOT NULL,
	"device_id" text NOT NULL,
	"message_id" bigint NOT NULL,
	CONSTRAINT "delivery_mark_user_id_device_id_message_id_pk" PRIMARY KEY("user_id","device_id","message_id")
);
--> statement-breakpoint
CREATE TABLE "inbox" (
	"user_id" bigint NOT NULL,
	"message_id" bigint NOT NULL,
	CONSTRAINT "inbox_user_id_message_id_pk" PRIMARY KEY("user_id","message_id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "users_account_uq" ON "users" USING btree ("account");--> statement-breakpoint
CREATE INDEX "users_account_type_idx" ON "users" USING btree ("account_type") WHERE "users"."account_type" <> 0;--> statement-breakpoint
CREATE UNIQUE INDEX "messages_sender_client_id_uq" ON "messages" USING btree (coalesce("from_id", 0),"client_id");--> statement-breakpoint
CREATE INDEX "messages_c2c_pair_idx" ON "messages" USING btree (least("from_id", "to_id"),greatest("from_id", "to_id"),"id") WHERE "messages"."chat_type" = 'C2C';--> statement-breakpoint
CREATE INDEX "messages_c2g_idx" ON "messages" USING btree ("to_id","id") WHERE "messages"."chat_type" = 'C2G';--> statement-breakpoint
CREATE INDEX "messages_c2c_from_idx" ON "messages" USING btree ("from_id","server_ts") WHERE "messages"."chat_type" = 'C2C';--> statement-breakpoint
CREATE INDEX "messages_c2c_to_idx" ON "messages" USING btree ("to_id","server_ts") WHERE "messages"."chat_type" = 'C2C';--> statement-breakpoint
CREATE INDEX "messages_server_ts_idx" ON "messages" USING btree ("server_ts");--> statement-breakpoint
CREATE INDEX "messages_client_id_idx" ON "messages" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "friend_request_to_idx" ON "friend_request" USING btree ("to_id","status");--> statement-breakpoint
CREATE INDEX "im_group_member_user_idx" ON "im_group_member" USING btree ("user_id","role");--> statement-breakpoint
CREATE UNIQUE INDEX "mention_msg_user_uq" ON "mention" USING btree ("msg_id","mentioned_id");--> statement-breakpoint
CREATE INDEX "mention_user_idx" ON "mention" USING btree ("mentioned_id","id");--> statement-breakpoint
CREATE INDEX "mention_unread_idx" ON "mention" USING btree ("mentioned_id","group_id") WHERE "mention"."is_read" = false;--> statement-breakpoint
CREATE INDEX "delivery_mark_message_idx" ON "delivery_mark" USING btree ("message_id");--> statement-breakpoint
CREATE INDEX "inbox_message_idx" ON "inbox" USING btree ("message_id");