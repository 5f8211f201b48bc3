/**
 * Request signatures (IBIS_API_SIGNATURE; scheme in docs/operations.md), the
 * part the SDK and the server share. WebCrypto only, so it runs in browsers too.
 *
 *   string to sign = "IBIS-HMAC-SHA256" \n app \n METHOD \n path?query \n timestamp \n nonce \n hex(SHA-256(body))
 *   X-Ibis-Signature = hex(HMAC-SHA256(app key, string to sign))
 */
export const SIGNATURE_SCHEME = "IBIS-HMAC-SHA256";

export const SignatureHeader = {
  app: "x-ibis-app",
  timestamp: "x-ibis-timestamp",
  nonce: "x-ibis-nonce",
  signature: "x-ibis-signature",
} as const;

/** 16–64 characters of base64url: long enough to be unique, short enough to remember many. */
export const NONCE_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;

export interface SignedParts {
  readonly app: string;
  readonly method: string;
  /** Path and query exactly as in the request URL (`/api/v1/x?a=1`). */
  readonly target: string;
  /** Milliseconds since the epoch, as sent. */
  readonly timestamp: string;
  readonly nonce: string;
  /** Lower-case hex SHA-256 of the body bytes (of nothing for an empty body). */
  readonly bodySha256: string;
}

export function stringToSign(p: SignedParts): string {
  return [SIGNATURE_SCHEME, p.app, p.method.toUpperCase(), p.target, p.timestamp, p.nonce, p.bodySha256].join("\n");
}

const hex = (buf: ArrayBuffer) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");
const enc = new TextEncoder();

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
}

/** The client side: the four headers for one request. */
export async function signRequest(
  signing: { readonly app: string; readonly key: string },
  method: string,
  url: string,
  body: Uint8Array,
  now = Date.now(),
): Promise<Record<string, string>> {
  const u = new URL(url);
  const nonce = Array.from(crypto.getRandomValues(new Uint8Array(18)), (b) => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[b & 63]).join("");
  const parts: SignedParts = {
    app: signing.app,
    method,
    target: u.pathname + u.search,
    timestamp: String(now),
    nonce,
    bodySha256: await sha256Hex(body),
  };
  const key = await crypto.subtle.importKey("raw", enc.encode(signing.key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, enc.encode(stringToSign(parts)));
  return {
    [SignatureHeader.app]: parts.app,
    [SignatureHeader.timestamp]: parts.timestamp,
    [SignatureHeader.nonce]: nonce,
    [SignatureHeader.signature]: hex(mac),
  };
}
