import { expect, test } from "bun:test";
import { contentTypeFor, objectKey, sanitizeFilename } from "../../../src/domain/attachments/rules.ts";
import { amzDate, presignUrl } from "../../../src/domain/attachments/sigv4.ts";

test.each([
  ["photo.jpg", "photo.jpg"],
  ["../../etc/passwd", "passwd"],
  ["C:\\Users\\me\\report final (2).pdf", "report_final_2_.pdf"],
  ['"><script>alert(1)</script>.html', "script_.html"],
  ["résumé.txt", "resume.txt"],
  ["...", "file"],
  ["", "file"],
  ["a".repeat(300) + ".tar.gz", "a".repeat(97) + ".gz"],
])("sanitizeFilename(%p) → %p", (raw, want) => {
  expect(sanitizeFilename(raw)).toBe(want);
});

test("object keys carry 128 random bits and never repeat", () => {
  const t = Date.UTC(2026, 10, 25);
  const a = objectKey("a.jpg", t);
  expect(a).toMatch(/^att\/2026\/11\/[A-Za-z0-9_-]{22}\/a\.jpg$/);
  expect(new Set(Array.from({ length: 1000 }, () => objectKey("a.jpg", t))).size).toBe(1000);
});

test("content type: a well-formed declaration, else the extension, else octet-stream; junk refused", () => {
  expect(contentTypeFor("a.png", undefined)).toBe("image/png");
  expect(contentTypeFor("a.png", "Image/WebP")).toBe("image/webp");
  expect(contentTypeFor("noext", undefined)).toBe("application/octet-stream");
  expect(contentTypeFor("a.png", "text/html\r\nx-evil: 1")).toBeUndefined();
});

test("the SigV4 signer gives exactly Bun.S3Client's presigned URL when it signs host only", () => {
  const target = { endpoint: "http://127.0.0.1:9000", bucket: "bkt", region: "eu-west-3", accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
  const bun = new Bun.S3Client({ ...target });
  for (const [method, key] of [["GET", "att/2026/11/x/a.jpg"], ["PUT", "some key/with spaces+plus(1).bin"]] as const) {
    const theirs = new URL(bun.presign(key, { method, expiresIn: 900 }));
    const date = theirs.searchParams.get("X-Amz-Date")!;
    const t = Date.UTC(+date.slice(0, 4), +date.slice(4, 6) - 1, +date.slice(6, 8), +date.slice(9, 11), +date.slice(11, 13), +date.slice(13, 15));
    expect(amzDate(t)).toBe(date);
    const ours = new URL(presignUrl(target, { method, key, expiresIn: 900, now: t }));
    expect(ours.pathname).toBe(theirs.pathname);
    expect(ours.searchParams.get("X-Amz-Signature")).toBe(theirs.searchParams.get("X-Amz-Signature"));
  }
});

test("signed headers change the signature and are listed", () => {
  const target = { endpoint: "https://s3.example.com", bucket: "b", region: "us-east-1", accessKeyId: "A", secretAccessKey: "S" };
  const base = { method: "PUT" as const, key: "k", expiresIn: 60, now: 1_700_000_000_000 };
  const a = new URL(presignUrl(target, { ...base, headers: { "content-length": "10", "content-type": "image/png" } }));
  const b = new URL(presignUrl(target, { ...base, headers: { "content-length": "11", "content-type": "image/png" } }));
  expect(a.searchParams.get("X-Amz-SignedHeaders")).toBe("content-length;content-type;host");
  expect(a.searchParams.get("X-Amz-Signature")).not.toBe(b.searchParams.get("X-Amz-Signature"));
});
