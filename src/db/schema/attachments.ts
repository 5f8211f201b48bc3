import { sql } from "drizzle-orm";
import { bigint, index, pgTable, text } from "drizzle-orm/pg-core";
import { id, ms, nowMs } from "./columns.ts";

/**
 * Attachments uploaded straight to the object store (spec §4.1, §9.6;
 * docs/operations.md). A row is written at presign and completed once the
 * uploader confirms the object is there with the size it declared; rows never
 * completed are swept (object and row) through the partial cleanup index.
 */
export const attachments = pgTable(
  "attachment",
  {
    id: id("id").primaryKey(),
    ownerId: id("owner_id").notNull(),
    objectKey: text("object_key").notNull().unique(),
    filename: text("filename").notNull(),
    contentType: text("content_type").notNull(),
    /** Declared at presign (signed into the upload), or null when the client did not say; the real size once completed. */
    sizeBytes: bigint("size_bytes", { mode: "number" }),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
    completedAt: ms("completed_at"),
  },
  (t) => [index("attachment_cleanup_idx").on(t.createdAt).where(sql`${t.completedAt} is null`)],
);
