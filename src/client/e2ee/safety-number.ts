/**
 * Safety number (spec §2.11), frozen by §9.7. Each side is encoded as
 *   version (1 byte, SAFETY_NUMBER_VERSION) || uid (u64 BE) || len(device_id) (1 byte) || device_id (UTF-8) || ed25519 (32 bytes),
 * the two encodings are ordered bytewise, mac = HMAC-SHA256(key = first, 0x00 || second),
 * and the first 30 bytes of mac, big-endian, mod 10^60, make 12 groups of 5 digits.
 * WebCrypto only, so the same code runs in Bun and in browsers.
 */
export const SAFETY_NUMBER_VERSION = 1; // the spec leaves the value open: docs/e2ee.md

export interface SafetySide {
  readonly uid: bigint;
  readonly deviceId: string;
  /** 32 raw bytes of the Ed25519 identity public key. */
  readonly ed25519: Uint8Array;
}

const U64_MAX = (1n << 64n) - 1n;

export function encodeSide(side: SafetySide): Uint8Array<ArrayBuffer> {
  if (side.uid < 0n || side.uid > U64_MAX) throw new RangeError("uid must be an unsigned 64-bit integer");
  if (side.ed25519.length !== 32) throw new RangeError("ed25519 key must be 32 bytes");
  const did = new TextEncoder().encode(side.deviceId);
  if (did.length > 255) throw new RangeError("device_id must be at most 255 UTF-8 bytes");
  const out = new Uint8Array(1 + 8 + 1 + did.length + 32);
  const view = new DataView(out.buffer);
  out[0] = SAFETY_NUMBER_VERSION;
  view.setBigUint64(1, side.uid);
  out[9] = did.length;
  out.set(did, 10);
  out.set(side.ed25519, 10 + did.length);
  return out;
}

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

const MOD = 10n ** 60n;

/** 60 digits in 12 groups of 5, the same whichever side computes it. */
export async function safetyNumber(a: SafetySide, b: SafetySide): Promise<string> {
  const ea = encodeSide(a);
  const eb = encodeSide(b);
  const [first, second] = compareBytes(ea, eb) <= 0 ? [ea, eb] : [eb, ea];
  const key = await crypto.subtle.importKey("raw", first, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const message = new Uint8Array(1 + second.length);
  message.set(second, 1);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, message));
  let n = 0n;
  for (let i = 0; i < 30; i++) n = (n << 8n) | BigInt(mac[i]!);
  const digits = (n % MOD).toString().padStart(60, "0");
  return digits.match(/.{5}/g)!.join(" ");
}
