/** Strict Base64 (standard alphabet, padded): the text form of every key and signature in E2EE fields. */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** undefined for anything but canonical padded Base64. */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  return new Uint8Array(Buffer.from(text, "base64"));
}
