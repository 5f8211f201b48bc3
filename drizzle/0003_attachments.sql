CREATE TABLE "attachment" (
	"id" bigint PRIMARY KEY NOT NULL,
	"owner_id" bigint NOT NULL,
	"object_key" text NOT NULL,
	"filename" text NOT NULL,
	"content_type" text NOT NULL,
	"size_bytes" bigint,
	"created_at" bigint NOT NULL,
	"completed_at" bigint,
	CONSTRAINT "attachment_object_key_unique" UNIQUE("object_key")
);
--> statement-breakpoint
CREATE INDEX "attachment_cleanup_idx" ON "attachment" USING btree ("created_at") WHERE "attachment"."completed_at" is null;