import { and, asc, eq, isNull, lt } from "drizzle-orm";
import { attachments } from "../../db/schema/index.ts";
import type { Store } from "../../db/store.ts";
import type { IdGenerator } from "../../ids/tsid.ts";
import { fail, ok, type Result } from "../errors.ts";
import { contentTypeFor, objectKey, sanitizeFilename } from "./rules.ts";
import { presignUrl, type S3Target } from "./sigv4.ts";

export interface AttachmentLimits {
  readonly maxBytes: number;
  /** Seconds an upload URL stays valid. */
  readonly uploadTtl: number;
  /** Seconds a download URL stays valid (SigV4 allows 7 days at most). */
  readonly downloadTtl: number;
  /** Uploads not completed within this many ms are swept. */
  readonly pendingMs: number;
}

export interface PresignAnswer {
  attachment_id: bigint;
  key: string;
  filename: string;
  method: "PUT";
  upload_url: string;
  /** Headers the PUT must carry exactly: they are signed into the URL. */
  headers: Record<string, string>;
  expires_at: number;
  max_bytes: number;
  download_url: string;
  download_expires_at: number;
}

const SWEEP_BATCH = 500;

/**
 * Direct uploads to an S3-compatible store (spec §4.1 presign, §9.6): presign
 * writes a pending row and answers a PUT URL signed for the declared size and
 * type; `complete` checks the object (present, within the limit, the size
 * declared) before marking it done; `sweep` removes uploads never completed.
 */
export class Attachments {
  readonly #s3: Bun.S3Client;

  constructor(
    private readonly store: Store,
    private readonly ids: IdGenerator,
    private readonly target: S3Target,
    private readonly limits: AttachmentLimits,
    private readonly now: () => number,
  ) {
    this.#s3 = new Bun.S3Client({ ...target });
  }

  async presign(ownerId: bigint, req: { filename: string; size?: number; contentType?: string }): Promise<Result<PresignAnswer>> {
    const filename = sanitizeFilename(req.filename);
    const type = contentTypeFor(filename, req.contentType);
    if (!type) return fail("bad_request", "content_type: not a MIME type");
    if (req.size !== undefined && req.size > this.limits.maxBytes) {
      return fail("bad_request", `size: at most ${this.limits.maxBytes} bytes`);
    }
    const t = this.now();
    const key = objectKey(filename, t);
    const id = this.ids.next();
    await this.store.db.insert(attachments).values({ id, ownerId, objectKey: key, filename, contentType: type, sizeBytes: req.size ?? null, createdAt: t });
    const headers: Record<string, string> = { "content-type": type };
    if (req.size !== undefined) headers["content-length"] = String(req.size);
    return ok({
      attachment_id: id,
      key,
      filename,
      method: "PUT",
      upload_url: presignUrl(this.target, { method: "PUT", key, expiresIn: this.limits.uploadTtl, headers, now: t }),
      headers,
      expires_at: t + this.limits.uploadTtl * 1000,
      max_bytes: this.limits.maxBytes,
      ...this.#download(key, filename, t),
    });
  }

  /** The uploader says the PUT is done: the object must be there, within the limit and of the size declared. */
  async complete(ownerId: bigint, id: bigint): Promise<Result<{ attachment_id: bigint; key: string; size: number; content_type: string; download_url: string; download_expires_at: number }>> {
    const row = await this.#own(ownerId, id);
    if (!row) return fail("not_found", "attachment not found");
    const file = this.#s3.file(row.objectKey);
    const stat = await file.stat().catch(() => undefined);
    if (!stat) return fail("not_found", "nothing uploaded for this attachment yet");
    const tooBig = stat.size > this.limits.maxBytes;
    if (tooBig || (row.sizeBytes !== null && stat.size !== row.sizeBytes)) {
      // The store accepted a body the signature did not allow (a store that does not check signed headers): undone.
      await file.delete().catch(() => {});
      await this.store.db.delete(attachments).where(eq(attachments.id, id));
      return fail("bad_request", tooBig ? `upload exceeds ${this.limits.maxBytes} bytes` : "upload size differs from the size declared");
    }
    const t = this.now();
    if (row.completedAt === null) {
      await this.store.db.update(attachments).set({ completedAt: t, sizeBytes: stat.size }).where(eq(attachments.id, id));
    }
    return ok({ attachment_id: id, key: row.objectKey, size: stat.size, content_type: row.contentType, ...this.#download(row.objectKey, row.filename, t) });
  }

  /** A fresh download URL for a completed attachment of `ownerId` (recipients get the URL inside the message). */
  async downloadUrl(ownerId: bigint, id: bigint): Promise<Result<{ download_url: string; download_expires_at: number }>> {
    const row = await this.#own(ownerId, id);
    if (!row || row.completedAt === null) return fail("not_found", "attachment not found");
    return ok(this.#download(row.objectKey, row.filename, this.now()));
  }

  /** Deletes up to one batch of uploads never completed in time (object first, then row); returns how many. */
  async sweep(): Promise<number> {
    const rows = await this.store.db
      .select({ id: attachments.id, key: attachments.objectKey })
      .from(attachments)
      .where(and(isNull(attachments.completedAt), lt(attachments.createdAt, this.now() - this.limits.pendingMs)))
      .orderBy(asc(attachments.createdAt))
      .limit(SWEEP_BATCH);
    let gone = 0;
    for (const r of rows) {
      // An object that was never uploaded deletes fine (S3 answers 204); any other failure keeps the row for the next sweep.
      const deleted = await this.#s3.file(r.key).delete().then(() => true, () => false);
      if (!deleted) continue;
      await this.store.db.delete(attachments).where(eq(attachments.id, r.id));
      gone++;
    }
    return gone;
  }

  async #own(ownerId: bigint, id: bigint) {
    const [row] = await this.store.db
      .select()
      .from(attachments)
      .where(and(eq(attachments.id, id), eq(attachments.ownerId, ownerId)));
    return row;
  }

  #download(key: string, filename: string, t: number) {
    return {
      // Served as a download, never rendered inline from the bucket's origin.
      download_url: this.#s3.presign(key, { expiresIn: this.limits.downloadTtl, contentDisposition: `attachment; filename="${filename}"` }),
      download_expires_at: t + this.limits.downloadTtl * 1000,
    };
  }
}
