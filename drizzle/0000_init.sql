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
CREATE INDEX "messages_server_ts_idx" ON "messages" USING btree ("server_ts");--> statement-breakpoint
CREATE INDEX "messages_client_id_idx" ON "messages" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "delivery_mark_message_idx" ON "delivery_mark" USING btree ("message_id");--> statement-breakpoint
CREATE INDEX "inbox_message_idx" ON "inbox" USING btree ("message_id");