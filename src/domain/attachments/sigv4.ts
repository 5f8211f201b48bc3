/**
 * AWS Signature Version 4 query-string presigning (path-style URLs), for the
 * upload PUT. Bun.S3Client.presign signs only `host`; an upload must also bind
 * `content-length` and `content-type`, so that the object store itself
 * refuses a body of another size or type (docs/operations.md). The signer is
 * checked against Bun's own presign for the host-only case
 * (test/domain/attachments/sigv4.test.ts).
 */
import { createHash, createHmac } from "node:crypto";

export interface S3Target {
  readonly endpoint: string;
  readonly bucket: string;
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

const hmac = (key: Buffer | string, data: string) => createHmac("sha256", key).update(data).digest();
/** RFC 3986 encoding, as SigV4 wants it ('/' kept in paths only). */
const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);

/** 20261125T081240Z */
export const amzDate = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");

export function presignUrl(
  t: S3Target,
  opts: {
    readonly method: "GET" | "PUT";
    readonly key: string;
    readonly expiresIn: number;
    /** Lower-case header names → values the request must carry (host is added). */
    readonly headers?: Readonly<Record<string, string>>;
    readonly now: number;
  },
): string {
  const base = new URL(t.endpoint);
  const path = `${base.pathname.replace(/\/$/, "")}/${enc(t.bucket)}/${opts.key.split("/").map(enc).join("/")}`;
  const date = amzDate(opts.now);
  const scope = `${date.slice(0, 8)}/${t.region}/s3/aws4_request`;
  const headers: Record<string, string> = { ...opts.headers, host: base.host };
  const names = Object.keys(headers).sort();
  const query: [string, string][] = [
    ["X-Amz-Algorithm", "AWS4-HMAC-SHA256"],
    ["X-Amz-Credential", `${t.accessKeyId}/${scope}`],
    ["X-Amz-Date", date],
    ["X-Amz-Expires", String(opts.expiresIn)],
    ["X-Amz-SignedHeaders", names.join(";")],
  ];
  const canonicalQuery = query
    .map(([k, v]) => `${enc(k)}=${enc(v)}`)
    .sort()
    .join("&");
  const canonical = [
    opts.method,
    path,
    canonicalQuery,
    names.map((n) => `${n}:${headers[n]!.trim()}\n`).join(""),
    names.join(";"),
    "UNSIGNED-PAYLOAD",
  ].join("\n");
  const toSign = ["AWS4-HMAC-SHA256", date, scope, createHash("sha256").update(canonical).digest("hex")].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${t.secretAccessKey}`, date.slice(0, 8)), t.region), "s3"), "aws4_request");
  const signature = createHmac("sha256", key).update(toSign).digest("hex");
  return `${base.protocol}//${base.host}${path}?${canonicalQuery}&X-Amz-Signature=${signature}`;
}
