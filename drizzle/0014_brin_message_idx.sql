DROP INDEX "delivery_mark_message_idx";--> statement-breakpoint
DROP INDEX "inbox_message_idx";--> statement-breakpoint
CREATE INDEX "delivery_mark_message_idx" ON "delivery_mark" USING brin ("message_id");--> statement-breakpoint
CREATE INDEX "inbox_message_idx" ON "inbox" USING brin ("message_id");