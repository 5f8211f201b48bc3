CREATE TABLE "channel_admin" (
	"channel_id" bigint NOT NULL,
	"user_id" bigint NOT NULL,
	"role" smallint NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "channel_admin_channel_id_user_id_pk" PRIMARY KEY("channel_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "channel_daily_stat" (
	"channel_id" bigint NOT NULL,
	"day" integer NOT NULL,
	"views" integer DEFAULT 0 NOT NULL,
	"reactions" integer DEFAULT 0 NOT NULL,
	"subscribes" integer DEFAULT 0 NOT NULL,
	"unsubscribes" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "channel_daily_stat_channel_id_day_pk" PRIMARY KEY("channel_id","day")
);
--> statement-breakpoint
CREATE TABLE "channel_invitation" (
	"id" bigint PRIMARY KEY NOT NULL,
	"channel_id" bigint NOT NULL,
	"inviter_id" bigint NOT NULL,
	"invitee_id" bigint NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"responded_at" bigint
);
--> statement-breakpoint
CREATE TABLE "channel_message" (
	"id" bigint PRIMARY KEY NOT NULL,
	"channel_id" bigint NOT NULL,
	"seq" bigint NOT NULL,
	"author_id" bigint NOT NULL,
	"msg_type" text NOT NULL,
	"content" text NOT NULL,
	"payload" text,
	"request_id" text,
	"view_count" integer DEFAULT 0 NOT NULL,
	"reaction_count" integer DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL,
	"edited_at_us" bigint,
	"revoked_at_us" bigint
);
--> statement-breakpoint
CREATE TABLE "channel_order" (
	"order_no" text PRIMARY KEY NOT NULL,
	"channel_id" bigint NOT NULL,
	"user_id" bigint NOT NULL,
	"amount" integer NOT NULL,
	"currency" text NOT NULL,
	"status" text DEFAULT 'created' NOT NULL,
	"provider" text DEFAULT '' NOT NULL,
	"transaction_id" text,
	"created_at" bigint NOT NULL,
	"paid_at" bigint,
	"cancelled_at" bigint
);
--> statement-breakpoint
CREATE TABLE "channel_reaction" (
	"message_id" bigint NOT NULL,
	"user_id" bigint NOT NULL,
	"reaction_type" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "channel_reaction_message_id_user_id_reaction_type_pk" PRIMARY KEY("message_id","user_id","reaction_type")
);
--> statement-breakpoint
CREATE TABLE "channel_subscription" (
	"channel_id" bigint NOT NULL,
	"user_id" bigint NOT NULL,
	"read_seq" bigint DEFAULT 0 NOT NULL,
	"subscribed_at" bigint NOT NULL,
	CONSTRAINT "channel_subscription_channel_id_user_id_pk" PRIMARY KEY("channel_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "channel" (
	"id" bigint PRIMARY KEY NOT NULL,
	"owner_id" bigint NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"avatar" text DEFAULT '' NOT NULL,
	"custom_id" text,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"visibility" smallint,
	"access_type" smallint,
	"join_policy" smallint,
	"price" integer DEFAULT 0 NOT NULL,
	"currency" text DEFAULT 'CNY' NOT NULL,
	"last_seq" bigint DEFAULT 0 NOT NULL,
	"subscriber_count" integer DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"deleted_at" bigint
);
--> statement-breakpoint
CREATE INDEX "channel_admin_user_idx" ON "channel_admin" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "channel_invitation_invitee_idx" ON "channel_invitation" USING btree ("invitee_id","channel_id");--> statement-breakpoint
CREATE INDEX "channel_invitation_inviter_idx" ON "channel_invitation" USING btree ("inviter_id");--> statement-breakpoint
CREATE UNIQUE INDEX "channel_message_seq_uq" ON "channel_message" USING btree ("channel_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "channel_message_request_uq" ON "channel_message" USING btree ("channel_id","author_id","request_id") WHERE "channel_message"."request_id" is not null;--> statement-breakpoint
CREATE INDEX "channel_message_day_idx" ON "channel_message" USING btree ("channel_id","created_at");--> statement-breakpoint
CREATE INDEX "channel_order_user_idx" ON "channel_order" USING btree ("user_id","channel_id","status");--> statement-breakpoint
CREATE INDEX "channel_subscription_user_idx" ON "channel_subscription" USING btree ("user_id","channel_id");--> statement-breakpoint
CREATE UNIQUE INDEX "channel_custom_id_uq" ON "channel" USING btree ("custom_id") WHERE "channel"."custom_id" is not null and "channel"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "channel_owner_idx" ON "channel" USING btree ("owner_id");--> statement-breakpoint
CREATE INDEX "channel_tags_idx" ON "channel" USING gin ("tags");--> statement-breakpoint
CREATE INDEX "channel_search_idx" ON "channel" USING gin (to_tsvector('simple', "name" || ' ' || "description"));