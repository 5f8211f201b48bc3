/**
 * The one JSON codec of Ibis (REST and WebSocket). 64-bit ids never pass
 * through a JS `number`:
 *  - parse: integer literals beyond 2^53 are read from their source text as
 *    `bigint` (Bun's reviver `context.source`); smaller numbers stay numbers.
 *  - stringify: `bigint` values are written as bare JSON number literals
 *    (`JSON.rawJSON`), so ids leave as exact JSON numbers.
 */

declare global {
  interface JSON {
    /** Bun/JSC: a value JSON.stringify writes verbatim (TC39 JSON.parse source text access). */
    rawJSON(text: string): unknown;
  }
}

// A number literal of 16+ digits at the start or right after `:`, `[` or `,`.
// A match inside a string only costs the slower reviver path, never correctness.
const LONG_NUMBER = /(?:^|[:[,])\s*-?\d{16}/;
const INTEGER = /^-?\d+$/;

function exactReviver(this: unknown, _key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value === "number" && !Number.isSafeInteger(value) && context?.source && INTEGER.test(context.source)) {
    return BigInt(context.source);
  }
  return value;
}

/** Parses JSON text; throws SyntaxError like JSON.parse. */
export function parseJson(text: string): unknown {
  return LONG_NUMBER.test(text) ? JSON.parse(text, exactReviver as never) : JSON.parse(text);
}

/** Parses JSON text; returns `undefined` instead of throwing. */
export function tryParseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: parseJson(text) };
  } catch {
    return { ok: false };
  }
}

function bigintReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? JSON.rawJSON(value.toString()) : value;
}

/**
 * Stringifies with bigint written as exact JSON numbers. Most values (message
 * payloads) hold no bigint: the plain native stringify goes first, and only a
 * bigint (which makes it throw) takes the slower replacer path.
 */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    return JSON.stringify(value, bigintReplacer);
  }
}

const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** Decodes UTF-8 JSON straight from bytes (a view is fine: no copy is made first). */
export function parseJsonBytes(bytes: Uint8Array): unknown {
  return parseJson(decoder.decode(bytes));
}

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}
