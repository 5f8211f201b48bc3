/**
 * The /api/v1/init encryption (spec §2.2; exact rule in docs/auth.md):
 *   key = SHA-256(UTF-8 bytes of IBIS_INIT_SECRET)            (32 bytes → AES-256)
 *   iv  = 16 random bytes, fresh per answer
 *   ct  = AES-256-CBC(key, iv, UTF-8 JSON of the init data) with PKCS#7 padding
 *   res = standard Base64 (with padding) of iv ‖ ct
 */
const IV_BYTES = 16;

async function keyFor(secret: string, usage: "encrypt" | "decrypt"): Promise<CryptoKey> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret));
  return crypto.subtle.importKey("raw", digest, { name: "AES-CBC" }, false, [usage]);
}

export async function encryptInit(secret: string, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const ct = await crypto.subtle.encrypt({ name: "AES-CBC", iv }, await keyFor(secret, "encrypt"), new TextEncoder().encode(plaintext));
  const out = new Uint8Array(IV_BYTES + ct.byteLength);
  out.set(iv, 0);
  out.set(new Uint8Array(ct), IV_BYTES);
  return Buffer.from(out).toString("base64");
}

/** The client side of the rule (tests and the SDK). */
export async function decryptInit(secret: string, res: string): Promise<string> {
  const bytes = Buffer.from(res, "base64");
  const iv = bytes.subarray(0, IV_BYTES);
  const plain = await crypto.subtle.decrypt({ name: "AES-CBC", iv }, await keyFor(secret, "decrypt"), bytes.subarray(IV_BYTES));
  return new TextDecoder().decode(plain);
}
