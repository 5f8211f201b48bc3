-- C2C messages get no inbox rows and no sender mark from now on: a device's C2C pending set is read from the
-- per-side C2C indexes (now by server id) and the sending device is the new from_device column. Rows stored
-- before keep their inbox rows and marks, which still count (docs/delivery.md "C2C").
DROP INDEX "messages_c2c_from_idx";--> statement-breakpoint
DROP INDEX "messages_c2c_to_idx";--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "from_device" text;--> statement-breakpoint
CREATE INDEX "messages_c2c_from_idx" ON "messages" USING btree ("from_id","id") WHERE "messages"."chat_type" = 'C2C';--> statement-breakpoint
CREATE INDEX "messages_c2c_to_idx" ON "messages" USING btree ("to_id","id") WHERE "messages"."chat_type" = 'C2C';