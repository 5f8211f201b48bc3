CREATE TABLE "e2ee_device_key" (
	"user_id" bigint NOT NULL,
	"device_id" text NOT NULL,
	"ed25519" text NOT NULL,
	"curve25519" text NOT NULL,
	"wrap_key" text NOT NULL,
	"key_signature" text NOT NULL,
	"key_version" integer NOT NULL,
	"last_event_ts" bigint DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "e2ee_device_key_user_id_device_id_pk" PRIMARY KEY("user_id","device_id")
);
--> statement-breakpoint
CREATE TABLE "e2ee_proxy_key" (
	"user_id" bigint PRIMARY KEY NOT NULL,
	"public_key" text NOT NULL,
	"private_key_sealed" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "e2ee_shard" (
	"shard_id" uuid PRIMARY KEY NOT NULL,
	"owner_uid" bigint NOT NULL,
	"key_version" integer NOT NULL,
	"proxy_uid" bigint NOT NULL,
	"set_id" uuid NOT NULL,
	"threshold" smallint NOT NULL,
	"total" smallint NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"encrypted_shard" text,
	"encrypted_data" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "trust_audit" (
	"id" bigint PRIMARY KEY NOT NULL,
	"actor_uid" bigint NOT NULL,
	"actor_device_id" varchar(128) NOT NULL,
	"target_uid" bigint NOT NULL,
	"target_device_id" varchar(128) NOT NULL,
	"target_ed25519" text NOT NULL,
	"from_state" varchar(20) NOT NULL,
	"to_state" varchar(20) NOT NULL,
	"method" varchar(40) NOT NULL,
	"actor_signature" text NOT NULL,
	"ts" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "e2ee_shard_owner_idx" ON "e2ee_shard" USING btree ("owner_uid","key_version");--> statement-breakpoint
CREATE INDEX "e2ee_shard_proxy_idx" ON "e2ee_shard" USING btree ("proxy_uid","status");--> statement-breakpoint
CREATE INDEX "trust_audit_target_idx" ON "trust_audit" USING btree ("target_uid","target_device_id");--> statement-breakpoint
CREATE INDEX "trust_audit_actor_idx" ON "trust_audit" USING btree ("actor_uid");