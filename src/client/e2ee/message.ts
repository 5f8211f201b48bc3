/**
 * Building an encrypted message (spec §2.8): a one-time AES-256 key and a
 * 12-byte nonce encrypt the content (AES-GCM); the key is wrapped for each
 * receiving device with RSA-OAEP-256; the Base64 ciphertext becomes the
 * payload and the metadata goes into `e2ee`. The server never sees the key.
 */
import type { E2eeMeta } from "../../model/message.ts";
import { fromBase64, toBase64 } from "../../protocol/base64.ts";
import { WRAP_ALG } from "../../protocol/e2ee.ts";

export { WRAP_ALG };

export const E2EE_SUITE = "RSA-OAEP-256+AES-256-GCM";

export interface RecipientDevice {
  readonly did: string;
  readonly kid?: string;
  /** RSA-OAEP (SHA-256) public key of that device. */
  readonly publicKey: CryptoKey;
}

export interface EncryptedParts {
  readonly payload: string;
  readonly e2ee: E2eeMeta;
}

export async function encryptForDevices(content: unknown, devices: readonly RecipientDevice[]): Promise<EncryptedParts> {
  if (devices.length === 0) throw new RangeError("an encrypted message needs at least one receiving device");
  const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, true, ["encrypt", "decrypt"]);
  const nonce = crypto.getRandomValues(new Uint8Array(12));
  const plain = new TextEncoder().encode(JSON.stringify(content));
  const cipher = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv: nonce }, key, plain));
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", key));
  const keys = await Promise.all(
    devices.map(async (d) => ({
      did: d.did,
      ...(d.kid ? { kid: d.kid } : {}),
      wrap_alg: WRAP_ALG,
      ek: toBase64(new Uint8Array(await crypto.subtle.encrypt({ name: "RSA-OAEP" }, d.publicKey, raw))),
    })),
  );
  return {
    payload: toBase64(cipher),
    e2ee: { e2ee: true, e2ee_ver: 1, e2ee_suite: E2EE_SUITE, nonce: toBase64(nonce), keys },
  };
}

/** Opens a message addressed to device `did`; undefined when it has no key for it or anything fails. */
export async function decryptForDevice(
  parts: EncryptedParts,
  did: string,
  privateKey: CryptoKey,
): Promise<unknown | undefined> {
  const entry = parts.e2ee.keys.find((k) => k.did === did);
  const ek = entry && fromBase64(entry.ek);
  const nonce = fromBase64(parts.e2ee.nonce);
  const cipher = fromBase64(parts.payload);
  if (!ek || !nonce || !cipher) return undefined;
  try {
    const raw = await crypto.subtle.decrypt({ name: "RSA-OAEP" }, privateKey, ek);
    const key = await crypto.subtle.importKey("raw", raw, { name: "AES-GCM" }, false, ["decrypt"]);
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: nonce }, key, cipher);
    return JSON.parse(new TextDecoder().decode(plain));
  } catch {
    return undefined;
  }
}
