/**
 * Device-verification QR (spec §2.10): {v:1, uid, device_id, ed25519, curve25519,
 * identity_blob, identity_signature, sig}. The scanner checks identity_signature
 * over identity_blob with the peer's ed25519 key, then the top-level sig over
 * the canonical bytes below; any failure rejects the code.
 * Canonical bytes of `sig` (left open by the spec, fixed in docs/e2ee.md):
 *   UTF-8 of `v|uid|device_id|ed25519|curve25519` (uid decimal, keys Base64).
 */
import { fromBase64 } from "../../protocol/base64.ts";
import { verifyEd25519 } from "../../protocol/e2ee.ts";

export interface VerificationQr {
  readonly v: 1;
  readonly uid: bigint;
  readonly device_id: string;
  readonly ed25519: string;
  readonly curve25519: string;
  readonly identity_blob: string;
  readonly identity_signature: string;
  readonly sig: string;
}

export type QrCheck = { readonly ok: true; readonly qr: VerificationQr } | { readonly ok: false; readonly reason: "invalid" | "tampered" };

export function qrSignedBytes(q: Pick<VerificationQr, "v" | "uid" | "device_id" | "ed25519" | "curve25519">): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(`${q.v}|${q.uid}|${q.device_id}|${q.ed25519}|${q.curve25519}`);
}

/** Parses the QR text; uid must be an exact integer (a JSON number literal or a decimal string). */
export function parseQr(text: string): VerificationQr | undefined {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(text, (_k, v, ctx?: { source?: string }) =>
      typeof v === "number" && ctx?.source && /^\d+$/.test(ctx.source) ? BigInt(ctx.source) : v,
    );
  } catch {
    return undefined;
  }
  if (!o || typeof o !== "object") return undefined;
  const uid = typeof o.uid === "bigint" ? o.uid : typeof o.uid === "string" && /^\d+$/.test(o.uid) ? BigInt(o.uid) : undefined;
  const strings = ["device_id", "ed25519", "curve25519", "identity_blob", "identity_signature", "sig"] as const;
  if (o.v !== 1n || uid === undefined || strings.some((k) => typeof o[k] !== "string")) return undefined;
  return { ...(o as unknown as VerificationQr), v: 1, uid };
}

export async function checkQr(text: string): Promise<QrCheck> {
  const qr = parseQr(text);
  if (!qr) return { ok: false, reason: "invalid" };
  const pub = fromBase64(qr.ed25519);
  const blob = fromBase64(qr.identity_blob);
  const blobSig = fromBase64(qr.identity_signature);
  const sig = fromBase64(qr.sig);
  if (!pub || pub.length !== 32 || !blob || !blobSig || !sig) return { ok: false, reason: "invalid" };
  if (!(await verifyEd25519(pub, blobSig, blob))) return { ok: false, reason: "tampered" };
  if (!(await verifyEd25519(pub, sig, qrSignedBytes(qr)))) return { ok: false, reason: "tampered" };
  return { ok: true, qr };
}
