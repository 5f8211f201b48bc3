/**
 * The one JSON codec of Ibis (REST and WebSocket). 64-bit ids never pass
 * through a JS `number`:
 *  - parse: integer literals beyond 2^53 are read from their source text as
 *    `bigint` (`parseExact`); smaller numbers stay numbers.
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
// A match inside a string only costs the scan (parseExact), never correctness.
const LONG_NUMBER = /(?:^|[:[,])\s*-?\d{16}/;
/** A JSON integer literal (no leading zero, no fraction, no exponent). */
const INTEGER = /^-?(?:0|[1-9]\d*)$/;

/**
 * Defined (true) in the browser SDK's build (scripts/build-client.ts): the bundle keeps the reviver below, which
 * is smaller than `parseExact` (the bundle has a size budget, and a client parses a message now and then).
 */
declare const IBIS_COMPACT_JSON: boolean | undefined;
// Read once: `typeof` of an undeclared global is a lookup on every call.
const COMPACT = typeof IBIS_COMPACT_JSON !== "undefined" && IBIS_COMPACT_JSON;

/**
 * Exact ids by a reviver reading each literal's source (TC39 JSON.parse source text access): the browser build's
 * parse, and the reference the tests hold `parseExact` to.
 */
export function exactReviver(this: unknown, _key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value === "number" && !Number.isSafeInteger(value) && context?.source && INTEGER.test(context.source)) {
    return BigInt(context.source);
  }
  return value;
}

/**
 * What a long integer literal is rewritten as before the native parse: a string no client can guess (a per-process
 * nonce), turned back into the literal's bigint after it. ASCII, so the text stays a one-byte string.
 */
let MARK = "";
let OPEN_MARK = ""; // made at the first use: a module with no work at load (the browser build drops it all)

/**
 * JSON.parse with every integer literal beyond 2^53 as a bigint read from its source text. Every Ibis id is such a
 * literal (a TSID is ~2^60), so nearly every message comes here. A reviver reading `context.source` does it with a
 * call and a context object for every value: 1.2 µs and 26 heap cells for a C2C uplink, against 0.16 µs and 2 for
 * the plain parse (`bun bench/json-exact.ts`). Here the text is scanned once (strings skipped natively), each such
 * literal is rewritten as a marked string, the result parsed natively and the marked strings put back: 0.78 µs and
 * 14 cells. (The doubles the literals round to cannot name them: ids minted together round to one double.)
 */
function parseExact(text: string): unknown {
  if (MARK === "") (MARK = `#${Math.random().toString(36).slice(2, 14)}#`), (OPEN_MARK = `"${MARK}`);
  let parts: string[] | undefined;
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(text, i) - 1;
      continue;
    }
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) continue;
    let j = i + 1;
    while (j < text.length && isNumberChar(text.charCodeAt(j))) j++;
    // 2^53 has 16 digits: anything shorter is a safe integer or not an integer. A literal followed by ":" stands
    // where a key belongs: left alone, so the text stays as invalid as it was.
    if (j - i >= 16 && text.charCodeAt(skipSpace(text, j)) !== 0x3a) {
      const literal = text.slice(i, j);
      if (INTEGER.test(literal) && !Number.isSafeInteger(Number(literal))) {
        (parts ??= []).push(text.slice(last, i), OPEN_MARK, literal, '"');
        last = j;
      }
    }
    i = j - 1;
  }
  if (parts === undefined) return JSON.parse(text);
  const count = parts.length / 4;
  parts.push(text.slice(last));
  return unmark(JSON.parse(parts.join("")), count);
}

/** Digits, sign, point and exponent: the characters a JSON number literal is made of. */
const isNumberChar = (c: number) => (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;

/** `s` as the bigint it stands for when parseExact marked it. */
function marked(s: string): bigint | undefined {
  return s.startsWith(MARK) ? BigInt(s.slice(MARK.length)) : undefined;
}

/** Puts back the `count` marked literals of a parsed value (no recursion: the walk keeps its own stack). */
function unmark(root: unknown, count: number): unknown {
  if (typeof root === "string") return marked(root) ?? root;
  const todo: object[] = [];
  if (root !== null && typeof root === "object") todo.push(root);
  while (count > 0 && todo.length) {
    const v = todo.pop()!;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length && count > 0; i++) {
        const x: unknown = v[i];
        if (typeof x === "string") {
          const n = marked(x);
          if (n !== undefined) (v[i] = n), count--;
        } else if (x !== null && typeof x === "object") todo.push(x);
      }
      continue;
    }
    const o = v as Record<string, unknown>;
    for (const k in o) {
      const x = o[k];
      if (typeof x === "string") {
        const n = marked(x);
        if (n === undefined) continue;
        o[k] = n; // an own "__proto__" member (JSON.parse makes it data) is assigned, its setter shadowed
        if (--count === 0) break;
      } else if (x !== null && typeof x === "object") todo.push(x);
    }
  }
  return root;
}

/**
 * Nesting allowed in JSON from clients (REST bodies, WebSocket messages).
 * JSON.parse accepts far deeper text than JSON.stringify (and every
 * recursive walk after it) can handle: a 1 MiB body of `{"a":` parses, is
 * stored, then overflows the stack when it is written out again.
 */
export const MAX_JSON_DEPTH = 64;

/** At most `max` `{` and `[` in all (native searches): then no nesting can exceed `max`, the usual case. */
function fewOpenings(text: string, max: number): boolean {
  let n = 0;
  for (let i = text.indexOf("{"); i >= 0; i = text.indexOf("{", i + 1)) if (++n > max) return false;
  for (let i = text.indexOf("["); i >= 0; i = text.indexOf("[", i + 1)) if (++n > max) return false;
  return true;
}

/**
 * Whether `text` opens more than `max` arrays/objects at once. Strings are
 * skipped with indexOf (brackets inside them do not count), so a payload that
 * is mostly one long string costs a native search, not a loop per character.
 */
function nestedDeeper(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i) - 1;
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
  if (maxDepth !== undefined && text.length > maxDepth && !fewOpenings(text, maxDepth) && nestedDeeper(text, maxDepth)) {
    throw new SyntaxError(`JSON nested deeper than ${maxDepth} levels`);
  }
  if (!LONG_NUMBER.test(text)) return JSON.parse(text);
  return COMPACT ? JSON.parse(text, exactReviver as never) : parseExact(text);
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

/** Uplink payloads of at least this many characters are kept as they arrived (see `payloadSourceOf`). */
export const LARGE_PAYLOAD_CHARS = 64 * 1024;
const PAYLOAD_TEXT = Symbol("payload JSON text as it arrived");

/**
 * A large payload as it arrived: its JSON text, its UTF-8 bytes (a view of
 * the frame) or both. Read from bytes with long strings left in them
 * (`keepPayloadBytes`), there is no text, and `standIn` is what validation
 * reads instead of the payload (json-sharing.ts `BytesJson.standIn`).
 */
export interface PayloadSource {
  readonly text?: string;
  readonly utf8?: Uint8Array;
  readonly standIn?: unknown;
}

/**
 * Marks a decoded message with its payload's JSON text as it arrived, when
 * large: validation stores and pushes that text instead of encoding the
 * parsed payload again (a 16 MiB stringify is tens of ms of a blocked event
 * loop), and with its UTF-8 bytes when the caller has them, so the store and
 * the protobuf push copy bytes instead of encoding the text once each. Not
 * enumerable: the object still looks like the parsed JSON.
 */
export function keepPayloadText<T extends object>(msg: T, text: string | undefined, utf8?: Uint8Array): T {
  if (text !== undefined && text.length >= LARGE_PAYLOAD_CHARS) {
    const kept: PayloadSource = utf8 ? { text, utf8 } : { text };
    Object.defineProperty(msg, PAYLOAD_TEXT, { value: kept });
  }
  return msg;
}

/** `keepPayloadText` for a large payload known only as its bytes (its text made if someone asks for it). */
export function keepPayloadBytes<T extends object>(msg: T, utf8: Uint8Array, standIn: unknown): T {
  if (utf8.length >= LARGE_PAYLOAD_CHARS) {
    const kept: PayloadSource = standIn === undefined ? { utf8 } : { utf8, standIn };
    Object.defineProperty(msg, PAYLOAD_TEXT, { value: kept });
  }
  return msg;
}

/** The payload `keepPayloadText` recorded, if any. */
export const payloadSourceOf = (msg: object): PayloadSource | undefined => (msg as { [PAYLOAD_TEXT]?: PayloadSource })[PAYLOAD_TEXT];

/**
 * The source text of a top-level member's value in a JSON object text that
 * already parsed (JSON.parse accepted it), and the index it starts at; or
 * undefined when the member is absent, appears more than once, or its key is
 * written with escapes. Lets a large payload be stored as it arrived instead
 * of being encoded again: the scan skips strings with indexOf, so a long
 * string costs a native search.
 */
export function memberSpan(text: string, key: string): { start: number; text: string } | undefined {
  const quoted = `"${key}"`;
  let i = text.indexOf("{") + 1;
  let found: [number, number] | undefined;
  const answer = () => found && { start: found[0], text: text.slice(found[0], found[1]) };
  for (;;) {
    i = skipSpace(text, i);
    if (text[i] !== '"') return answer(); // "}" (empty object), or the end
    const keyEnd = stringEnd(text, i);
    const k = text.slice(i, keyEnd);
    if (k.includes("\\")) return undefined; // escaped key: compare decoded (rare, not worth it)
    i = skipSpace(text, keyEnd) + 1; // past ":"
    const start = skipSpace(text, i);
    const end = valueEnd(text, start);
    if (k === quoted) {
      if (found) return undefined; // duplicate: JSON.parse keeps the last; do not guess
      found = [start, end];
    }
    i = skipSpace(text, end);
    if (text[i] !== ",") return answer();
    i++;
  }
}

/** The index of the first character at or after `i` that is not JSON whitespace. */
export function skipSpace(t: string, i: number): number {
  for (;;) {
    const c = t.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/** `i` at an opening quote: the index just past its closing quote (the text's length when there is none). */
export function stringEnd(t: string, i: number): number {
  for (let q = t.indexOf('"', i + 1); ; q = t.indexOf('"', q + 1)) {
    if (q < 0) return t.length; // unterminated: never on text that parsed
    let slashes = 0;
    while (t.charCodeAt(q - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return q + 1;
  }
}

/** `i` at the start of a value: the index just past it. */
function valueEnd(t: string, i: number): number {
  const c = t[i];
  if (c === '"') return stringEnd(t, i);
  if (c !== "{" && c !== "[") {
    let j = i;
    while (j < t.length && !",}] \n\r\t".includes(t[j]!)) j++;
    return j;
  }
  let depth = 0;
  for (let j = i; j < t.length; j++) {
    const d = t[j];
    if (d === '"') j = stringEnd(t, j) - 1;
    else if (d === "{" || d === "[") depth++;
    else if (d === "}" || d === "]") {
      if (--depth === 0) return j + 1;
    }
  }
  return t.length;
}

const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** Strict UTF-8 → text (throws TypeError on invalid UTF-8). */
export const utf8Text = (bytes: Uint8Array): string => decoder.decode(bytes);

/** A string's UTF-8 length as TextEncoder writes it (a lone surrogate becomes U+FFFD, 3 bytes), counted without encoding. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Decodes UTF-8 JSON straight from bytes (a view is fine: no copy is made first). */
export function parseJsonBytes(bytes: Uint8Array, maxDepth?: number): unknown {
  return parseJson(decoder.decode(bytes), maxDepth);
}

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}
