/**
 * Attachments end to end against a real S3-compatible server (s3rver on
 * loopback): presign, PUT the bytes to the URL, complete, GET them back; size
 * and expiry refusals; the sweep of uploads never completed. PGlite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { attachments } from "../../src/db/schema/index.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { startS3, type TestS3 } from "../support/s3.ts";
import { storeKinds } from "../support/stores.ts";
import { createUser, type TestUser } from "../support/ws.ts";

let s3: TestS3;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(() => s3.stop());

const MAX = 1024;

for (const kind of storeKinds()) {
  describe(`attachments [${kind}]`, () => {
    let clock = Date.now();
    let node: TestNode;
    let alice: TestUser, bob: TestUser;
    beforeAll(async () => {
      node = await startTestNode(kind, { ...s3.config, attachmentMaxBytes: MAX }, { now: () => clock });
      alice = await createUser(node);
      bob = await createUser(node);
    });
    afterAll(() => node.stop());

    const presign = async (who: TestUser, query: string) => (await api(node, "GET", `/api/v1/attachment/presign?${query}`, { token: who.token })).body;
    const complete = async (who: TestUser, id: unknown) => (await api(node, "POST", "/api/v1/attachment/complete", { token: who.token, body: { attachment_id: id } })).body;
    const put = (p: { upload_url: string; headers: Record<string, string> }, body: string, headers: Record<string, string> = {}) =>
      fetch(p.upload_url, { method: "PUT", headers: { ...p.headers, ...headers }, body });

    test("presign → PUT → complete → GET: the bytes come back, as a download, under an unguessable key", async () => {
      const bytes = "hello attachment";
      const res = await presign(alice, `filename=${encodeURIComponent("../My Photo (1).jpg")}&size=${bytes.length}`);
      expect(res.code).toBe(0);
      const p = res.payload;
      expect(p).toMatchObject({ method: "PUT", filename: "My_Photo_1_.jpg", max_bytes: MAX, headers: { "content-type": "image/jpeg", "content-length": String(bytes.length) } });
      expect(p.key).toMatch(/^att\/\d{4}\/\d{2}\/[A-Za-z0-9_-]{22}\/My_Photo_1_\.jpg$/);
      expect(new URL(p.upload_url).searchParams.get("X-Amz-SignedHeaders")).toBe("content-length;content-type;host");
      expect(p.expires_at).toBe(clock + 900_000);

      expect((await put(p, bytes)).status).toBe(200);
      const done = await complete(alice, p.attachment_id);
      expect(done).toMatchObject({ code: 0, payload: { key: p.key, size: bytes.length, content_type: "image/jpeg" } });
      const got = await fetch(done.payload.download_url);
      expect(got.status).toBe(200);
      expect(await got.text()).toBe(bytes);
      expect(got.headers.get("content-disposition")).toBe('attachment; filename="My_Photo_1_.jpg"');

      const again = await api(node, "GET", `/api/v1/attachment/url?attachment_id=${p.attachment_id}`, { token: alice.token });
      expect(await (await fetch(again.body.payload.download_url)).text()).toBe(bytes);
    });

    test("another user can neither complete nor fetch URLs for it; missing filename is a 400", async () => {
      const p = (await presign(alice, "filename=a.txt&size=1")).payload;
      await put(p, "x");
      expect((await complete(bob, p.attachment_id)).code).toBe(404);
      expect((await api(node, "GET", `/api/v1/attachment/url?attachment_id=${p.attachment_id}`, { token: bob.token })).body.code).toBe(404);
      expect((await presign(alice, "size=1")).code).toBe(400);
      expect((await api(node, "GET", "/api/v1/attachment/presign?filename=a.txt")).status).toBe(401);
    });

    test("past the size limit: refused at presign; a body other than the one declared is refused at complete and deleted", async () => {
      const big = await presign(alice, `filename=big.bin&size=${MAX + 1}`);
      expect([big.code, big.msg]).toEqual([400, `size: at most ${MAX} bytes`]);

      // s3rver does not check signed headers (S3 would answer 403 SignatureDoesNotMatch): Ibis checks at complete.
      const p = (await presign(alice, "filename=small.bin&size=10")).payload;
      expect((await put(p, "y".repeat(MAX + 100), { "content-length": String(MAX + 100) })).status).toBe(200);
      const refused = await complete(alice, p.attachment_id);
      expect([refused.code, refused.msg]).toEqual([400, `upload exceeds ${MAX} bytes`]);
      expect(await s3.client.file(p.key).exists()).toBe(false);
      expect((await complete(alice, p.attachment_id)).code).toBe(404);

      const undeclared = (await presign(alice, "filename=u.bin")).payload;
      expect(undeclared.headers["content-length"]).toBeUndefined();
      await put(undeclared, "z".repeat(MAX + 1));
      expect((await complete(alice, undeclared.attachment_id)).msg).toBe(`upload exceeds ${MAX} bytes`);
    });

    test("an upload URL past its expiry is refused by the store", async () => {
      // Signed 15 min 1 s ago with a 15 min lifetime (asked of the domain directly: a token would be from the future then).
      clock = Date.now() - 901_000;
      const signed = await node.services.attachments!.presign(alice.userId, { filename: "late.txt", size: 4 });
      clock = Date.now();
      if (!signed.ok) throw new Error(signed.error.msg);
      const p = signed.value;
      const late = await put(p, "late");
      expect(late.status).toBe(403);
      expect(await late.text()).toContain("Request has expired");
      expect((await complete(alice, p.attachment_id)).code).toBe(404);
    });

    test("the sweep deletes uploads never completed (object and record), and only those", async () => {
      const kept = (await presign(alice, "filename=kept.txt&size=4")).payload;
      await put(kept, "kept");
      expect((await complete(alice, kept.attachment_id)).code).toBe(0);
      const orphan = (await presign(alice, "filename=orphan.txt&size=6")).payload;
      await put(orphan, "orphan");
      const never = (await presign(alice, "filename=never.txt")).payload;

      expect(await node.services.attachments!.sweep()).toBe(0); // not old enough yet
      clock += 25 * 3_600_000;
      expect(await node.services.attachments!.sweep()).toBeGreaterThanOrEqual(2);
      clock = Date.now();
      const rows = await node.services.store.db.select({ id: attachments.id }).from(attachments);
      const ids = new Set(rows.map((r) => r.id));
      expect(ids.has(BigInt(kept.attachment_id))).toBe(true);
      expect(ids.has(BigInt(orphan.attachment_id))).toBe(false);
      expect(ids.has(BigInt(never.attachment_id))).toBe(false);
      expect(await s3.client.file(orphan.key).exists()).toBe(false);
      expect(await s3.client.file(kept.key).exists()).toBe(true);
    });
  });
}

test("presign is throttled per user, and answers 503 where no object store is configured", async () => {
  const throttled = await startTestNode("pglite", { ...s3.config, attachmentPresignPerMin: 2 });
  const bare = await startTestNode("pglite");
  try {
    const u = await createUser(throttled);
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await api(throttled, "GET", "/api/v1/attachment/presign?filename=a.txt", { token: u.token })).body.code);
    expect(codes).toEqual([0, 0, 429]);
    const v = await createUser(bare);
    const res = await api(bare, "GET", "/api/v1/attachment/presign?filename=a.txt", { token: v.token });
    expect([res.status, res.body.code]).toEqual([503, 503]);
  } finally {
    await throttled.stop();
    await bare.stop();
  }
});
