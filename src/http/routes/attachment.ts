import { Hono } from "hono";
import { z } from "zod";
import { WindowLimiter } from "../../domain/auth/throttle.ts";
import { unwrap } from "../../domain/errors.ts";
import type { Services } from "../../services.ts";
import { currentUser, requireUser, type AppEnv } from "../auth.ts";
import { envelope, json, ok } from "../envelope.ts";
import { failureResponse } from "../errors.ts";
import { schema, valid } from "../openapi.ts";
import { perUserThrottle } from "../throttle.ts";
import { zId, zInt } from "../zod.ts";

const PresignQuery = z.object({
  filename: z.string({ error: "filename is required" }).min(1).max(255),
  size: zInt.pipe(z.number().min(0)).optional().describe("bytes; signed into the upload URL when given"),
  content_type: z.string().max(128).optional().describe("default: from the file name's extension"),
});
const AttachmentRef = z.object({ attachment_id: zId });

/** Direct uploads to the object store (spec §4.1, §9.6; docs/operations.md "Attachments"). */
export function attachmentRoutes(services: Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { attachments, config } = services;
  const perUser = new WindowLimiter(config.attachmentPresignPerMin, 60_000, services.now, config.throttleOff);
  app.use("/api/v1/attachment/*", requireUser(services));
  app.use("/api/v1/attachment/*", async (c, next) => {
    if (!attachments) return json(c, envelope(503, "attachments are not configured on this server (IBIS_S3_*)", {}), 503);
    await next();
  });

  app.get("/api/v1/attachment/presign", schema({ summary: "Presigned direct upload (PUT) and download URL", query: PresignQuery }), async (c) => {
    const { userId } = currentUser(c);
    if (!perUser.take(String(userId))) return failureResponse(c, { kind: "rate_limited", msg: "too many uploads, try again in a minute" });
    const q = valid(c, PresignQuery);
    return ok(c, unwrap(await attachments!.presign(userId, { filename: q.filename, size: q.size, contentType: q.content_type })));
  });

  // Completion asks the object store for the object's size: the same per-user budget as other state writes.
  app.post("/api/v1/attachment/complete", perUserThrottle(services, config.stateWritesPerMin, "upload completions"), schema({ summary: "Confirm an upload (size checked against the declaration)", body: AttachmentRef }), async (c) =>
    ok(c, unwrap(await attachments!.complete(currentUser(c).userId, valid(c, AttachmentRef).attachment_id))),
  );

  app.get("/api/v1/attachment/url", schema({ summary: "A fresh download URL for one of your attachments", query: AttachmentRef }), async (c) =>
    ok(c, unwrap(await attachments!.downloadUrl(currentUser(c).userId, valid(c, AttachmentRef).attachment_id))),
  );
  return app;
}
