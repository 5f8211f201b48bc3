/**
 * Strict Base64 (standard alphabet, padded): the text form of every key and signature in E2EE fields.
 * The native Uint8Array methods (Bun, and browsers since 2025), so the client's E2EE runs in browsers too.
 */

// TypeScript's DOM/ESNext libs do not declare them yet (bun-types does); the SDK's build sees only those libs.
declare global {
  interface Uint8Array<TArrayBuffer extends ArrayBufferLike = ArrayBufferLike> {
    toBase64(): string;
  }
  interface Uint8ArrayConstructor {
    fromBase64(text: string): Uint8Array<ArrayBuffer>;
  }
}

export function toBase64(bytes: Uint8Array): string {
  return bytes.toBase64();
}

/** undefined for anything but canonical padded Base64. */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  return Uint8Array.fromBase64(text);
}
