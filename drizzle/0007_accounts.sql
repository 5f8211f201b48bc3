CREATE TABLE "admin_audit" (
	"id" bigint PRIMARY KEY NOT NULL,
	"admin_id" bigint NOT NULL,
	"action" text NOT NULL,
	"target_user_id" bigint,
	"detail" text DEFAULT '{}' NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "admin_session" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"admin_id" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "auth_session" (
	"user_id" bigint NOT NULL,
	"device_id" text NOT NULL,
	"gen" integer DEFAULT 0 NOT NULL,
	"refresh_jti" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "auth_session_user_id_device_id_pk" PRIMARY KEY("user_id","device_id")
);
--> statement-breakpoint
ALTER TABLE "user_device" ADD COLUMN "name" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "suspended_at" bigint;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "searchable_by" text DEFAULT 'everyone' NOT NULL;--> statement-breakpoint
CREATE INDEX "admin_audit_target_idx" ON "admin_audit" USING btree ("target_user_id","id") WHERE "admin_audit"."target_user_id" is not null;--> statement-breakpoint
CREATE INDEX "admin_audit_admin_idx" ON "admin_audit" USING btree ("admin_id","id");--> statement-breakpoint
CREATE INDEX "admin_session_admin_idx" ON "admin_session" USING btree ("admin_id");--> statement-breakpoint
CREATE INDEX "users_nickname_search_idx" ON "users" USING btree (lower("nickname") text_pattern_ops) WHERE "users"."searchable_by" = 'everyone' and "users"."deleted_at" is null;