/**
 * Secret columns (spec §5.7, IBIS_FIELD_KEY): AES-256-GCM under a key derived
 * from the configured field key with HKDF-SHA-256. A value is
 * "f1." + Base64(nonce (12) || ciphertext+tag); the column name is bound as
 * additional data, so a value copied into another column does not open.
 */
const PREFIX = "f1.";
const INFO = new TextEncoder().encode("ibis field v1");

export class FieldCipher {
  private constructor(private readonly key: CryptoKey) {}

  static async fromSecret(fieldKey: string): Promise<FieldCipher> {
    if (!fieldKey) throw new Error("field key is empty");
    const ikm = await crypto.subtle.importKey("raw", new TextEncoder().encode(fieldKey), "HKDF", false, ["deriveKey"]);
    const key = await crypto.subtle.deriveKey(
      { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: INFO },
      ikm,
      { name: "AES-GCM", length: 256 },
      false,
      ["encrypt", "decrypt"],
    );
    return new FieldCipher(key);
  }

  async seal(column: string, plain: Uint8Array<ArrayBuffer>): Promise<string> {
    const nonce = crypto.getRandomValues(new Uint8Array(12));
    const ct = new Uint8Array(await crypto.subtle.encrypt(this.params(column, nonce), this.key, plain));
    const out = new Uint8Array(12 + ct.length);
    out.set(nonce);
    out.set(ct, 12);
    return PREFIX + Buffer.from(out).toString("base64");
  }

  /** undefined when the value is malformed, was sealed under another key, or for another column. */
  async open(column: string, value: string): Promise<Uint8Array<ArrayBuffer> | undefined> {
    if (!value.startsWith(PREFIX)) return undefined;
    const bytes = new Uint8Array(Buffer.from(value.slice(PREFIX.length), "base64"));
    if (bytes.length < 12 + 16) return undefined;
    try {
      return new Uint8Array(await crypto.subtle.decrypt(this.params(column, bytes.subarray(0, 12)), this.key, bytes.subarray(12)));
    } catch {
      return undefined;
    }
  }

  private params(column: string, nonce: Uint8Array<ArrayBuffer>) {
    return { name: "AES-GCM", iv: nonce, additionalData: new TextEncoder().encode(column) };
  }
}
