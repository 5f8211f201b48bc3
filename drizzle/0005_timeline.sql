CREATE TABLE "im_group_join_request" (
	"group_id" bigint NOT NULL,
	"user_id" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "im_group_join_request_group_id_user_id_pk" PRIMARY KEY("group_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "timeline" (
	"message_id" bigint PRIMARY KEY NOT NULL,
	"conv_id" bigint NOT NULL,
	"seq" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "timeline_cursor" (
	"user_id" bigint NOT NULL,
	"device_id" text NOT NULL,
	"conv_id" bigint NOT NULL,
	"seq" bigint NOT NULL,
	"above" bigint[] DEFAULT '{}'::bigint[] NOT NULL,
	CONSTRAINT "timeline_cursor_user_id_device_id_conv_id_pk" PRIMARY KEY("user_id","device_id","conv_id")
);
--> statement-breakpoint
CREATE TABLE "timeline_head" (
	"conv_id" bigint PRIMARY KEY NOT NULL,
	"last_seq" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "timeline_member" (
	"conv_id" bigint NOT NULL,
	"user_id" bigint NOT NULL,
	"join_seq" bigint NOT NULL,
	"leave_seq" bigint,
	CONSTRAINT "timeline_member_conv_id_user_id_join_seq_pk" PRIMARY KEY("conv_id","user_id","join_seq")
);
--> statement-breakpoint
DROP INDEX "messages_client_id_idx";--> statement-breakpoint
CREATE UNIQUE INDEX "timeline_conv_seq_uq" ON "timeline" USING btree ("conv_id","seq");--> statement-breakpoint
CREATE INDEX "timeline_member_user_idx" ON "timeline_member" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "messages_tsid_idx" ON "messages" USING btree (split_part("client_id", '.', 2),"client_id");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_c2g_tsid_uq" ON "messages" USING btree (split_part("client_id", '.', 2),"to_id") WHERE "messages"."chat_type" = 'C2G';--> statement-breakpoint
CREATE UNIQUE INDEX "messages_c2c_tsid_uq" ON "messages" USING btree (split_part("client_id", '.', 2),least("from_id", "to_id"),greatest("from_id", "to_id")) WHERE "messages"."chat_type" = 'C2C';