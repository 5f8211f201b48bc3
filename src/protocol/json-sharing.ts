/**
 * Large JSON read without copying its long strings (the uplink of large
 * messages): from a text (`parseJsonSharing`) or from UTF-8 bytes without
 * making the text at all (`parseJsonBytesSharing`). Apart from json.ts: only
 * the server needs it, and the browser SDK bundles json.ts.
 */
import { isUtf8 } from "node:buffer";
import { keepPayloadBytes, keepPayloadText, LARGE_PAYLOAD_CHARS, MAX_JSON_DEPTH, memberSpan, parseJson, skipSpace, stringEnd, utf8Length } from "./json.ts";
import { decodeMessagePb } from "./pb.ts";
import { decodeMessageBytes, isObject, looksLikeJsonObject, skipSpaceBytes } from "./uplink.ts";

/** String values at least this long are candidates for `parseJsonSharing` (shorter ones cost little to copy). */
const SHARED_STRING_CHARS = 4096;
/** What keeps a string body from being its own value: an escape or a raw control character (then JSON.parse decides). */
const NOT_VERBATIM = /[\x00-\x1f\\]/;

/**
 * Parses JSON text like `parseJson`, but in a large text (`LARGE_PAYLOAD_CHARS`)
 * a long string value written without escapes comes back as a slice of
 * `text` (JSC shares the slice's memory) instead of the copy JSON.parse
 * makes. A 16 MiB message's payload string is then not a second fresh 16 MiB
 * allocation: ~4,100 page faults and ~9 ms of a blocked event loop each
 * (bench/alloc-faults.ts). The walk over the text's strings is linear (each
 * backslash is counted once, for the quote after it).
 *
 * Such strings are swapped for short placeholders (`\u0000<nonce>:<n>`)
 * before the parse and put back after it. The text parsed differs from
 * `text` only inside string bodies that are valid JSON on both sides, so it
 * parses (or fails) exactly as `text` would; object keys are never swapped.
 */
export function parseJsonSharing(text: string, maxDepth?: number): unknown {
  if (text.length < LARGE_PAYLOAD_CHARS) return parseJson(text, maxDepth);
  const nonce = `${Math.random().toString(36).slice(2)}:`;
  const parts: string[] = [];
  const shared: string[] = [];
  let from = 0;
  for (let open = text.indexOf('"'); open >= 0; ) {
    const close = stringEnd(text, open) - 1;
    // Unterminated: JSON.parse says so. (A text ending in an escaped quote reads as closed here; its body holds the
    // backslash, so it is not swapped.)
    if (text.charCodeAt(close) !== 0x22) break;
    if (close - open > SHARED_STRING_CHARS && text.charCodeAt(skipSpace(text, close + 1)) !== 0x3a /* ":": a key */) {
      const value = text.slice(open + 1, close);
      if (!NOT_VERBATIM.test(value)) {
        parts.push(text.slice(from, open + 1), "\\u0000", nonce, String(shared.length));
        shared.push(value);
        from = close;
      }
    }
    open = text.indexOf('"', close + 1);
  }
  if (shared.length === 0) return parseJson(text, maxDepth);
  parts.push(text.slice(from));
  return restoreShared(parseJson(parts.join(""), maxDepth), `\u0000${nonce}`, shared);
}

/** Puts the shared strings back where their placeholders were parsed (recursion as deep as the value: the uplink's parse bounds it). */
function restoreShared(v: unknown, prefix: string, shared: readonly string[]): unknown {
  if (typeof v === "string") {
    if (!v.startsWith(prefix)) return v;
    const n = Number(v.slice(prefix.length));
    return Number.isInteger(n) && n < shared.length ? shared[n] : v;
  }
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = restoreShared(v[i], prefix, shared);
    return v;
  }
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const before = o[k];
    const after = restoreShared(before, prefix, shared);
    // defineProperty: a "__proto__" member is an own property here, and assigning it would set the prototype.
    if (after !== before) Object.defineProperty(o, k, { value: after, writable: true, enumerable: true, configurable: true });
  }
  return o;
}

// ---- from bytes ------------------------------------------------------------------

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const loose = new TextDecoder("utf-8", { ignoreBOM: true });
/** A string whose value no validation rule could tell from a placeholder's (see `BytesJson.standIn`) starts otherwise. */
const READ_BY_RULES = /^[\s\d-]/;

/** JSON read from UTF-8 bytes by `parseJsonBytesSharing`. */
export interface BytesJson {
  /**
   * The parsed value, equal to what `parseJson` makes of the decoded bytes.
   * Long strings under the top-level member named by `lazyUnder` (null: in
   * the whole value) are accessor members that decode their bytes when first
   * read; no string of the whole text is made.
   */
  readonly value: unknown;
  /**
   * The `lazyUnder` member (null: the value) parsed once more with those strings as short
   * placeholders (`\u0000…`), when there are any: what validation reads
   * without decoding them. Only strings that start with neither whitespace,
   * a digit nor `-` are left as placeholders, so every rule a message's
   * payload is checked by (a string, non-empty, a number or an id written as
   * a string, trimmed) answers for a placeholder as for the string it
   * stands for; the Base64 rule applies to a top-level payload string, which
   * is always decoded.
   */
  readonly standIn?: unknown;
  /** The text parsed: the bytes decoded, with the long strings left in them as placeholders (if any). */
  readonly text: string;
  /** Whether a placeholder sits in `text` between these two indexes. */
  sharesWithin(from: number, to: number): boolean;
  /** The byte offset of an index of `text` outside placeholders. */
  byteAt(index: number): number;
}

/** The index of the quote that closes the string opened at `open`, or -1 (escaped quotes skipped; each backslash counted once). */
function closingQuote(b: Uint8Array, open: number): number {
  for (let q = b.indexOf(QUOTE, open + 1); q >= 0; q = b.indexOf(QUOTE, q + 1)) {
    let slashes = 0;
    while (b[q - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q;
  }
  return -1;
}

/**
 * Whether bytes [from, to) hold neither a backslash nor a control character
 * (below 0x20): a string body JSON reads verbatim. Four bytes at a time (the
 * classic "has a byte less than n" and "has a zero byte" word tests, exact as
 * yes/no answers): a per-byte loop over 16 MiB blocks the event loop for
 * 9–16 ms, this one for ~3.6 (`bun bench/alloc-faults.ts`).
 */
export function verbatimBytes(b: Uint8Array, from: number, to: number, clean?: CleanBlocks): boolean {
  return clean ? clean.verbatim(b, from, to) : verbatimScan(b, from, to);
}

function verbatimScan(b: Uint8Array, from: number, to: number): boolean {
  const base = b.byteOffset;
  const head = Math.min(to, from + ((4 - ((base + from) & 3)) & 3)); // up to the first word boundary
  const words = (to - head) >>> 2;
  return (
    bytesVerbatim(b, from, head) &&
    (words === 0 || wordsVerbatim(new Uint32Array(b.buffer, base + head, words))) && // a range ending before a word boundary has none
    bytesVerbatim(b, head + words * 4, to)
  );
}

/** `verbatimBytes` one byte at a time (the few before and after the whole words). */
function bytesVerbatim(b: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = b[i]!;
    if (c < 0x20 || c === BACKSLASH) return false;
  }
  return true;
}

/** `verbatimBytes` over whole words: 64 at a time, one branch each (the loop the JIT makes fastest). */
function wordsVerbatim(w: Uint32Array): boolean {
  const n = w.length;
  for (let k = 0; k < n; k += 64) {
    let found = 0;
    const end = Math.min(k + 64, n);
    for (let j = k; j < end; j++) {
      const x = w[j]!;
      const y = x ^ 0x5c5c5c5c;
      found |= ((x - 0x20202020) & ~x) | ((y - 0x01010101) & ~y);
    }
    if (found & 0x80808080) return false;
  }
  return true;
}

/** `CleanBlocks`' block: aligned in the buffer, so a block's words are read whole. */
const CLEAN_BLOCK = 1 << 16;

/**
 * Which aligned 64 KiB blocks of a large message's bytes hold neither a
 * backslash nor a control character, found ahead of its decode in slices
 * (`step`): the scan of a 16 MiB message is ~8 ms, and between slices the
 * node serves its other sockets (src/ws/dispatch.ts). `verbatimBytes` then
 * reads whole blocks from here and scans only the ends of a range. Exact: a
 * range is verbatim exactly when its ends are and every block inside it is.
 */
export class CleanBlocks {
  readonly #bytes: Uint8Array;
  /** The first block wholly inside the bytes (index in the buffer). */
  readonly #first: number;
  /** Per block from `#first`: 1 clean, 0 not. */
  readonly #clean: Uint8Array;
  #scanned = 0;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
    this.#first = Math.ceil(bytes.byteOffset / CLEAN_BLOCK);
    const end = Math.floor((bytes.byteOffset + bytes.length) / CLEAN_BLOCK);
    this.#clean = new Uint8Array(Math.max(0, end - this.#first));
  }

  get done(): boolean {
    return this.#scanned === this.#clean.length;
  }

  /** Scans about `budget` bytes more (whole blocks, at least one); true once every block is scanned. */
  step(budget: number): boolean {
    const stop = Math.min(this.#clean.length, this.#scanned + Math.max(1, Math.floor(budget / CLEAN_BLOCK)));
    const buffer = this.#bytes.buffer;
    for (let k = this.#scanned; k < stop; k++) {
      this.#clean[k] = wordsVerbatim(new Uint32Array(buffer, (this.#first + k) * CLEAN_BLOCK, CLEAN_BLOCK >>> 2)) ? 1 : 0;
    }
    this.#scanned = stop;
    return this.done;
  }

  /** `verbatimBytes` of a view of the same bytes: the blocks scanned inside [from, to) read from here. */
  verbatim(b: Uint8Array, from: number, to: number): boolean {
    if (b.buffer !== this.#bytes.buffer) return verbatimScan(b, from, to);
    const at = b.byteOffset;
    const lo = Math.max(Math.ceil((at + from) / CLEAN_BLOCK), this.#first);
    const hi = Math.min(Math.floor((at + to) / CLEAN_BLOCK), this.#first + this.#scanned);
    if (lo >= hi) return verbatimScan(b, from, to);
    for (let k = lo; k < hi; k++) if (this.#clean[k - this.#first] === 0) return false;
    return verbatimScan(b, from, lo * CLEAN_BLOCK - at) && verbatimScan(b, hi * CLEAN_BLOCK - at, to);
  }
}

/**
 * Parses UTF-8 JSON like `parseJson(strictUtf8(bytes))` (same values, the
 * same texts refused: a TypeError for invalid UTF-8, a SyntaxError for
 * invalid JSON) without decoding the whole text: a long string value written
 * without escapes is checked in place (valid UTF-8, no control character, no
 * backslash) and, when such strings are at least half of the bytes, parsed
 * as a placeholder (otherwise the whole text is decoded and parsed with
 * `parseJsonSharing`, as a text frame is). Under the top-level member
 * `lazyUnder` (a message's payload) such strings stay in the bytes until
 * read; anywhere else they are decoded at once. A 16 MiB message is then
 * not a 16 MiB string (the frame's text: 13–18 ms of fresh pages on the
 * event loop), nor, until someone reads it, its payload's.
 */
export function parseJsonBytesSharing(bytes: Uint8Array, lazyUnder: string | null, maxDepth?: number, clean?: CleanBlocks): BytesJson {
  // Long plain string bodies, found in place.
  const shared: { at: number; from: number; to: number }[] = [];
  let sharedBytes = 0;
  for (let open = bytes.indexOf(QUOTE); open >= 0; ) {
    const close = closingQuote(bytes, open);
    if (close < 0) break; // unterminated: JSON.parse says so
    if (
      close - open > SHARED_STRING_CHARS &&
      bytes[skipSpaceBytes(bytes, close + 1)] !== COLON && // a key
      verbatimBytes(bytes, open + 1, close, clean) &&
      isUtf8(bytes.subarray(open + 1, close))
    ) {
      shared.push({ at: 0, from: open + 1, to: close });
      sharedBytes += close - open - 1;
    }
    open = bytes.indexOf(QUOTE, close + 1);
  }
  // Unless they are most of the bytes (the usual large message: one long text), the whole text costs little more
  // than the rest of it, and placeholders would cost a second parse (validation's stand-in): read it as text.
  if (sharedBytes * 2 < bytes.length) {
    const text = strict.decode(bytes);
    const whole: Piece[] = [{ at: 0, from: 0, bytes: bytes.length, text }];
    return { value: parseJsonSharing(text, maxDepth), text, sharesWithin: () => false, byteAt: (i) => byteAt(whole, i) };
  }

  const nonce = `${Math.random().toString(36).slice(2)}:`;
  const parts: string[] = [];
  // Decoded pieces of the bytes, in order: where each starts in `text` and in the bytes.
  const pieces: Piece[] = [];
  let length = 0;
  let from = 0;
  const piece = (to: number) => {
    const text = strict.decode(bytes.subarray(from, to));
    pieces.push({ at: length, from, bytes: to - from, text });
    parts.push(text);
    length += text.length;
  };
  for (let n = 0; n < shared.length; n++) {
    const s = shared[n]!;
    piece(s.from);
    const mark = `\\u0000${nonce}${n}`;
    s.at = length;
    parts.push(mark);
    length += mark.length;
    from = s.to;
  }
  piece(bytes.length);
  const text = parts.join("");
  const value = parseJson(text, maxDepth);

  const decoded: (string | undefined)[] = [];
  const decode = (n: number) => (decoded[n] ??= strict.decode(bytes.subarray(shared[n]!.from, shared[n]!.to)));
  const prefix = `\u0000${nonce}`;
  const indexOf = (v: unknown): number => {
    if (typeof v !== "string" || !v.startsWith(prefix)) return -1;
    const n = Number(v.slice(prefix.length));
    return Number.isInteger(n) && n < shared.length ? n : -1;
  };
  const lazyOk = (n: number) => !READ_BY_RULES.test(loose.decode(bytes.subarray(shared[n]!.from, shared[n]!.from + 4)));
  let anyLazy = false;
  // mode "value": lazy ones become accessors; "standIn": they stay placeholders; both decode the others.
  const visit = (o: Record<string, unknown>, k: string | number, lazy: boolean, mode: "value" | "standIn") => {
    const before = o[k as never];
    const m = indexOf(before);
    if (lazy && m >= 0 && lazyOk(m)) {
      anyLazy = true;
      if (mode === "value") lazyMember(o, k, () => decode(m));
      return;
    }
    const after = m >= 0 ? decode(m) : walk(before, lazy, mode);
    // defineProperty: a "__proto__" member is an own property here, and assigning it would set the prototype.
    if (after !== before) Object.defineProperty(o, k, { value: after, writable: true, enumerable: true, configurable: true });
  };
  const walk = (v: unknown, lazy: boolean, mode: "value" | "standIn"): unknown => {
    const n = indexOf(v);
    if (n >= 0) return decode(n);
    if (typeof v !== "object" || v === null) return v;
    const o = v as Record<string, unknown>;
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) visit(o, i, lazy, mode);
    else for (const k of Object.keys(o)) visit(o, k, lazy, mode);
    return o;
  };
  const top = (v: unknown, mode: "value" | "standIn"): unknown => {
    if (lazyUnder === null) return walk(v, true, mode);
    if (typeof v !== "object" || v === null || Array.isArray(v)) return walk(v, false, mode);
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const before = o[k];
      const after = walk(before, k === lazyUnder, mode); // the member itself, a placeholder, is decoded (the Base64 rule reads it)
      if (after !== before) Object.defineProperty(o, k, { value: after, writable: true, enumerable: true, configurable: true });
    }
    return o;
  };
  const result = top(value, "value");
  const again = anyLazy ? top(parseJson(text, maxDepth), "standIn") : undefined;
  const standIn = lazyUnder === null ? again : (again as Record<string, unknown> | undefined)?.[lazyUnder];
  return {
    value: result,
    ...(anyLazy ? { standIn } : {}),
    text,
    sharesWithin: (a, b) => shared.some((s) => s.at >= a && s.at < b),
    byteAt: (i) => byteAt(pieces, i),
  };
}

/** A member that decodes its string when first read, then holds it (assigning replaces it with a plain value). */
function lazyMember(o: Record<string, unknown> | unknown[], k: string | number, read: () => string): void {
  const settle = (value: unknown) => Object.defineProperty(o, k, { value, writable: true, enumerable: true, configurable: true });
  Object.defineProperty(o, k, {
    enumerable: true,
    configurable: true,
    get: () => {
      const s = read();
      settle(s);
      return s;
    },
    set: settle,
  });
}

/** A decoded run of the bytes: where it starts in the parsed text and in the bytes, its byte length and text. */
interface Piece {
  readonly at: number;
  readonly from: number;
  readonly bytes: number;
  readonly text: string;
}

function byteAt(pieces: readonly Piece[], index: number): number {
  let p = pieces[0]!;
  for (const q of pieces) {
    if (q.at > index) break;
    p = q;
  }
  const chars = index - p.at;
  // All ASCII when the lengths agree (strictly decoded: every other character takes more bytes than units).
  return p.from + (p.bytes === p.text.length ? chars : utf8Length(p.text.slice(0, chars)));
}

/**
 * The uplink's read of a large JSON message from its bytes
 * (`decodeUplinkBytes`): `parseJsonBytesSharing` with the payload's long
 * strings left in the bytes, bounded in depth; undefined when the JSON is not
 * an object.
 */
export function readLargeMessage(bytes: Uint8Array, clean?: CleanBlocks): Record<string, unknown> | undefined {
  const r = parseJsonBytesSharing(bytes, "payload", MAX_JSON_DEPTH, clean);
  return isObject(r.value) ? withPayloadBytes(r.value, r, bytes) : undefined;
}

/**
 * The read of a large plain payload field of a protobuf message (pb.ts
 * `decodeMessagePb`) into `out.payload`: its long strings left in the bytes,
 * its text kept only when none was.
 */
export function readLargePayload(out: Record<string, unknown>, utf8: Uint8Array, clean?: CleanBlocks): void {
  const r = parseJsonBytesSharing(utf8, null, MAX_JSON_DEPTH, clean);
  out.payload = r.value;
  if (r.sharesWithin(0, r.text.length)) keepPayloadBytes(out, utf8, r.standIn);
  else keepPayloadText(out, r.text, utf8);
}

/**
 * The server's `decodeMessageBytes` (uplink.ts, same answers): a large binary
 * message is read from its bytes, as JSON (`readLargeMessage`) or as protobuf
 * with its payload field read so (`readLargePayload`); a small one as the
 * SDK reads it, its text parsed with `parseJsonSharing`.
 */
export function decodeUplinkBytes(bytes: Uint8Array, clean?: CleanBlocks): Record<string, unknown> | undefined {
  if (bytes.length < LARGE_PAYLOAD_CHARS) return decodeMessageBytes(bytes, parseJsonSharing);
  if (looksLikeJsonObject(bytes)) {
    try {
      const value = readLargeMessage(bytes, clean);
      if (value) return value;
    } catch {
      // not JSON: protobuf, as §4.5 rule 5 orders
    }
  }
  return decodeMessagePb(bytes, clean ? (out, utf8) => readLargePayload(out, utf8, clean) : readLargePayload);
}

/**
 * `withPayloadText` (uplink.ts) for a message read from its bytes: the payload's bytes as
 * a view of the frame and, when none of its long strings was left in the
 * bytes, its text; otherwise the text is made only when someone asks for it
 * (the stored and pushed forms are the bytes), and validation reads the
 * stand-in (`BytesJson.standIn`).
 */
function withPayloadBytes(msg: Record<string, unknown>, r: BytesJson, bytes: Uint8Array): Record<string, unknown> {
  const span = memberSpan(r.text, "payload");
  if (!span) return msg; // encoded again by validation (absent, repeated, or an escaped key)
  const end = span.start + span.text.length;
  const utf8 = bytes.subarray(r.byteAt(span.start), r.byteAt(end));
  if (!r.sharesWithin(span.start, end)) return keepPayloadText(msg, span.text, utf8);
  return keepPayloadBytes(msg, utf8, r.standIn);
}

