/**
 * The bytes E2EE signatures and sealed shards are made of, shared by the
 * server (src/domain/e2ee) and the SDK (src/client/e2ee): one layout, one
 * module, WebCrypto only (runs in Bun and browsers). Layouts and test
 * vectors: docs/e2ee.md.
 */
import { fromBase64 } from "./base64.ts";

/** Longest device id a key or an audit row may name (trust_audit.target_device_id, §2.10). */
export const MAX_DEVICE_ID_BYTES = 128;
export const ED25519_BYTES = 32;
export const X25519_BYTES = 32;
/** The message suite of spec §2.8; a device's `wrap_key` is its RSA-OAEP (SHA-256) public key. */
export const WRAP_ALG = "RSA-OAEP-256";
const RSA_OAEP = { name: "RSA-OAEP", hash: "SHA-256" } as const;

const TRUST_TAG = "ibis-trust-v1";
const KEYS_TAG = "ibis-device-keys-v1";

/** What an actor's device signs when it changes the trust state of a target device. */
export interface TrustEventFields {
  readonly actor_uid: bigint;
  readonly actor_device_id: string;
  readonly target_uid: bigint;
  readonly target_device_id: string;
  /** Base64 of the target's 32-byte identity key as the actor saw it. */
  readonly target_ed25519: string;
  readonly from_state: string;
  readonly to_state: string;
  readonly method: string;
  /** ms UTC, set by the actor; the server's replay check reads it. */
  readonly ts: number;
}

/** What a device signs with its own identity key when it publishes its keys (proof of possession). */
export interface DeviceKeyFields {
  readonly uid: bigint;
  readonly device_id: string;
  readonly ed25519: string;
  readonly curve25519: string;
  /** Base64 SPKI of the RSA-OAEP-256 public key messages are wrapped to. */
  readonly wrap_key: string;
}

/** A device with published keys as GET /api/v1/e2ee/devices lists it (docs/e2ee.md). */
export interface DeviceKeysView {
  readonly device_id: string;
  readonly device_type: string;
  /** user_device.status: 0 / -1 revoked / destroyed. */
  readonly status: number;
  /** user_device.trust_state: the owner's own statement about the device. */
  readonly trust_state: string;
  readonly ed25519: string;
  readonly curve25519: string;
  readonly wrap_key: string;
  readonly key_signature: string;
  readonly key_version: number;
  readonly updated_at: number;
}

/** Appends length-prefixed and fixed-width fields; throws RangeError on a field that does not fit. */
class Writer {
  readonly #parts: Uint8Array[] = [];
  #size = 0;

  raw(bytes: Uint8Array): this {
    this.#parts.push(bytes);
    this.#size += bytes.length;
    return this;
  }
  u64(n: bigint, what: string): this {
    if (n < 0n || n >= 1n << 64n) throw new RangeError(`${what} must be an unsigned 64-bit integer`);
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, n);
    return this.raw(b);
  }
  /** 1-byte length, then the UTF-8 text. */
  text8(s: string, what: string, max = 255): this {
    const b = new TextEncoder().encode(s);
    if (b.length > max) throw new RangeError(`${what} must be at most ${max} UTF-8 bytes`);
    return this.raw(Uint8Array.of(b.length)).raw(b);
  }
  /** 2-byte big-endian length, then the bytes. */
  bytes16(b: Uint8Array, what: string): this {
    if (b.length > 0xffff) throw new RangeError(`${what} is too long`);
    return this.raw(Uint8Array.of(b.length >> 8, b.length & 0xff)).raw(b);
  }
  key(text: string, size: number, what: string): this {
    const b = fromBase64(text);
    if (!b || b.length !== size) throw new RangeError(`${what} must be Base64 of ${size} bytes`);
    return this.raw(b);
  }
  done(): Uint8Array<ArrayBuffer> {
    const out = new Uint8Array(this.#size);
    let at = 0;
    for (const p of this.#parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

const tag = (t: string) => new TextEncoder().encode(t);

/**
 * Canonical bytes of a trust event (the `actor_signature` input):
 *   "ibis-trust-v1" || actor_uid u64 || len8 actor_device_id || target_uid u64 || len8 target_device_id
 *   || target_ed25519 (32 raw bytes) || len8 from_state || len8 to_state || len8 method || ts u64 (ms)
 * Integers big-endian, texts UTF-8 with a 1-byte length. Throws RangeError on a field that cannot be encoded.
 */
export function trustEventBytes(e: TrustEventFields): Uint8Array<ArrayBuffer> {
  if (!Number.isSafeInteger(e.ts) || e.ts < 0) throw new RangeError("ts must be a non-negative integer (ms)");
  return new Writer()
    .raw(tag(TRUST_TAG))
    .u64(e.actor_uid, "actor_uid")
    .text8(e.actor_device_id, "actor_device_id", MAX_DEVICE_ID_BYTES)
    .u64(e.target_uid, "target_uid")
    .text8(e.target_device_id, "target_device_id", MAX_DEVICE_ID_BYTES)
    .key(e.target_ed25519, ED25519_BYTES, "target_ed25519")
    .text8(e.from_state, "from_state", 20)
    .text8(e.to_state, "to_state", 20)
    .text8(e.method, "method", 40)
    .u64(BigInt(e.ts), "ts")
    .done();
}

/**
 * Canonical bytes of a device's key bundle (the `key_signature` input, signed with the bundle's own ed25519 key):
 *   "ibis-device-keys-v1" || uid u64 || len8 device_id || ed25519 (32) || curve25519 (32) || len16 wrap_key (SPKI DER)
 */
export function deviceKeyBytes(k: DeviceKeyFields): Uint8Array<ArrayBuffer> {
  const wrap = fromBase64(k.wrap_key);
  if (!wrap || wrap.length === 0) throw new RangeError("wrap_key must be Base64 of an SPKI public key");
  return new Writer()
    .raw(tag(KEYS_TAG))
    .u64(k.uid, "uid")
    .text8(k.device_id, "device_id", MAX_DEVICE_ID_BYTES)
    .key(k.ed25519, ED25519_BYTES, "ed25519")
    .key(k.curve25519, X25519_BYTES, "curve25519")
    .bytes16(wrap, "wrap_key")
    .done();
}

/** Ed25519 verification; false for a malformed key or signature, never a throw. */
export async function verifyEd25519(publicKey: Uint8Array<ArrayBuffer>, signature: Uint8Array<ArrayBuffer>, data: Uint8Array<ArrayBuffer>): Promise<boolean> {
  if (publicKey.length !== ED25519_BYTES || signature.length !== 64) return false;
  try {
    const key = await crypto.subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]);
    return await crypto.subtle.verify("Ed25519", key, signature, data);
  } catch {
    return false;
  }
}

/** The same, on Base64 texts (as they travel in JSON). */
export async function verifyEd25519Base64(publicKey: string, signature: string, data: Uint8Array<ArrayBuffer>): Promise<boolean> {
  const pub = fromBase64(publicKey);
  const sig = fromBase64(signature);
  return !!pub && !!sig && verifyEd25519(pub, sig, data);
}

/** Imports an RSA-OAEP-256 public key from Base64 SPKI; undefined when it is not one. */
export async function importWrapKey(spkiBase64: string): Promise<CryptoKey | undefined> {
  const der = fromBase64(spkiBase64);
  if (!der) return undefined;
  try {
    const key = await crypto.subtle.importKey("spki", der, RSA_OAEP, true, ["encrypt"]);
    const bits = (key.algorithm as unknown as { modulusLength: number }).modulusLength;
    return bits >= 2048 && bits <= 8192 ? key : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A sealed box to an RSA-OAEP-256 public key (social-recovery shards, §4.4):
 *   len16 ek || ek (RSA-OAEP-256 of a one-time AES-256 key) || nonce (12) || AES-256-GCM ciphertext+tag
 * The suite of §2.8 applied to one recipient.
 */
export async function seal(publicKey: CryptoKey, plain: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  const aes = crypto.getRandomValues(new Uint8Array(32));
  const nonce = crypto.getRandomValues(new Uint8Array(12));
  const key = await crypto.subtle.importKey("raw", aes, { name: "AES-GCM" }, false, ["encrypt"]);
  const ek = new Uint8Array(await crypto.subtle.encrypt(RSA_OAEP, publicKey, aes));
  const ct = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv: nonce }, key, plain));
  return new Writer().bytes16(ek, "ek").raw(nonce).raw(ct).done();
}

/** Opens a sealed box; undefined when it is malformed or does not decrypt under `privateKey`. */
export async function unseal(privateKey: CryptoKey, box: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer> | undefined> {
  if (box.length < 2) return undefined;
  const ekLen = (box[0]! << 8) | box[1]!;
  const nonceAt = 2 + ekLen;
  if (box.length < nonceAt + 12 + 16) return undefined;
  try {
    const aes = await crypto.subtle.decrypt(RSA_OAEP, privateKey, box.subarray(2, nonceAt));
    const key = await crypto.subtle.importKey("raw", aes, { name: "AES-GCM" }, false, ["decrypt"]);
    return new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv: box.subarray(nonceAt, nonceAt + 12) }, key, box.subarray(nonceAt + 12)));
  } catch {
    return undefined;
  }
}

export const RSA_OAEP_256 = RSA_OAEP;
