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

/**
 * Nesting allowed in JSON from clients (REST bodies, WebSocket messages).
 * JSON.parse accepts far deeper text than JSON.stringify (and every
 * recursive walk after it) can handle: a 1 MiB body of `{"a":` parses, is
 * stored, then overflows the stack when it is written out again.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether `text` opens more than `max` arrays/objects at once (brackets inside strings do not count). */
function nestedDeeper(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Parses JSON text; throws SyntaxError like JSON.parse. With `maxDepth`
 * (untrusted input), nesting deeper than it is a SyntaxError too; a text no
 * longer than the bound cannot exceed it and is not scanned.
 */
export function parseJson(text: string, maxDepth?: number): unknown {
  if (maxDepth !== undefined && text.length > maxDepth && nestedDeeper(text, maxDepth)) {
    throw new SyntaxError(`JSON nested deeper than ${maxDepth} levels`);
  }
  return LONG_NUMBER.test(text) ? JSON.parse(text, exactReviver as never) : JSON.parse(text);
}

/** Parses JSON text; returns `{ok: false}` instead of throwing. */
export function tryParseJson(text: string, maxDepth?: number): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: parseJson(text, maxDepth) };
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
export function parseJsonBytes(bytes: Uint8Array, maxDepth?: number): unknown {
  return parseJson(decoder.decode(bytes), maxDepth);
}

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}
