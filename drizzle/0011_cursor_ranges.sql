-- Cursor acks past a hole become ranges (docs/delivery.md "Cursors"): a hole that stays open costs one range
-- instead of one array element per message after it, and every write stays O(ranges).
ALTER TABLE "timeline_cursor" ADD COLUMN "above_runs" int8multirange DEFAULT '{}'::int8multirange NOT NULL;--> statement-breakpoint
UPDATE "timeline_cursor" SET "above_runs" = (SELECT range_agg(int8range(x, x, '[]')) FROM unnest("above") x)
  WHERE cardinality("above") > 0;--> statement-breakpoint
ALTER TABLE "timeline_cursor" DROP COLUMN "above";--> statement-breakpoint
ALTER TABLE "timeline_cursor" RENAME COLUMN "above_runs" TO "above";
