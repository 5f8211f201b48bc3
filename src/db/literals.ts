/** Array parameters as PostgreSQL array literals: one text parameter, one statement text for any length. */

const NEEDS_ESCAPE = /[\\"]/;
const ESCAPED = /[\\"]/g;

/** One element, quoted (a backslash before `"` and `\`; most texts have neither and are not rewritten), NULL for null. */
export function arrayElement(s: string | null | undefined): string {
  if (s === null || s === undefined) return "NULL";
  return NEEDS_ESCAPE.test(s) ? `"${s.replace(ESCAPED, "\\$&")}"` : `"${s}"`;
}

/** Quoted elements, NULL for null. */
export function arrayLiteral(items: readonly (string | null)[]): string {
  let out = "{";
  for (let i = 0; i < items.length; i++) out += (i ? "," : "") + arrayElement(items[i]);
  return out + "}";
}

/** The same for decimals (ids): no quoting needed, and no per-element work in the driver. */
export const decimalArray = (items: readonly string[]): string => `{${items.join(",")}}`;

/**
 * Decimal texts of ids met lately, for ids that repeat from batch to batch (the users of messages and marks):
 * a 64-bit bigint's toString cost ~150 ns, a hit here ~20 (bench/FINDINGS.md, sixteenth section). Bounded:
 * past DECIMALS_MAX ids it starts again empty, so a working set larger than that costs a toString as before.
 */
const DECIMALS = new Map<bigint, string>();
export const DECIMALS_MAX = 16_384;

export function decimalOf(v: bigint): string {
  let s = DECIMALS.get(v);
  if (s === undefined) {
    if (DECIMALS.size >= DECIMALS_MAX) DECIMALS.clear();
    DECIMALS.set(v, (s = v.toString()));
  }
  return s;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Up to this many bytes a payload is escaped byte by byte; past it, between native searches for the two bytes. */
const SCAN_BY_HAND = 256;
const encoder = new TextEncoder();

/**
 * Array literals written straight into UTF-8 bytes, bound as a text parameter's value (Store.query): the batch
 * statement's columns (src/delivery/writer.ts). As strings each column was a rope of the rows' pieces that the driver
 * flattened, measured and encoded again, and a payload held as bytes was first decoded and then escaped by a regex
 * replace (a 16-row batch: 1.48 → 0.70 µs a message in a loop; bench/FINDINGS.md, twenty-third section). Here a
 * payload's bytes are copied once, escaped on the way, never decoded (UTF-8's multi-byte sequences hold neither `"`
 * nor `\`).
 *
 * One scratch buffer serves every literal: `open` … `close` run in one turn, and `close` hands out a copy of exactly
 * the literal's bytes. The scratch grows to the largest literal written and stays (a batch holds at most ~1 MiB of
 * payloads, so at most ~2 MiB escaped).
 */
export class ArrayBytes {
  #buf = new Uint8Array(16 * 1024);
  #at = 0;
  #first = true;

  /** Starts a literal (`{`). */
  open(): this {
    this.#at = 0;
    this.#first = true;
    this.#room(1);
    this.#buf[this.#at++] = 0x7b;
    return this;
  }

  /** Ends it (`}`): a fresh array of exactly its bytes. */
  close(): Uint8Array {
    this.#room(1);
    this.#buf[this.#at++] = 0x7d;
    return this.#buf.slice(0, this.#at);
  }

  /** An unquoted element: a decimal (ASCII digits and a sign), or NULL. */
  bare(s: string): void {
    this.#sep(s.length);
    const buf = this.#buf;
    let at = this.#at;
    for (let i = 0; i < s.length; i++) buf[at++] = s.charCodeAt(i);
    this.#at = at;
  }

  /** A quoted text (`"` and `\` escaped), NULL for null. */
  text(s: string | null | undefined): void {
    if (s === null || s === undefined) return this.bare("NULL");
    this.#sep(2 * s.length + 2);
    const buf = this.#buf;
    const start = this.#at;
    let at = start;
    buf[at++] = QUOTE;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return this.#wide(start, s);
      if (c === QUOTE || c === BACKSLASH) buf[at++] = BACKSLASH;
      buf[at++] = c;
    }
    buf[at++] = QUOTE;
    this.#at = at;
  }

  /** A quoted text given as its UTF-8 bytes. */
  utf8(b: Uint8Array): void {
    this.#sep(2 * b.length + 2);
    const buf = this.#buf;
    let at = this.#at;
    buf[at++] = QUOTE;
    if (b.length <= SCAN_BY_HAND) {
      for (let i = 0; i < b.length; i++) {
        const c = b[i]!;
        if (c === QUOTE || c === BACKSLASH) buf[at++] = BACKSLASH;
        buf[at++] = c;
      }
    } else {
      // Runs between the bytes to escape, each found natively (a large payload is mostly runs).
      let quote = b.indexOf(QUOTE);
      let slash = b.indexOf(BACKSLASH);
      let from = 0;
      for (;;) {
        if (quote !== -1 && quote < from) quote = b.indexOf(QUOTE, from);
        if (slash !== -1 && slash < from) slash = b.indexOf(BACKSLASH, from);
        const next = quote === -1 ? slash : slash === -1 ? quote : Math.min(quote, slash);
        const end = next === -1 ? b.length : next;
        buf.set(b.subarray(from, end), at);
        at += end - from;
        if (next === -1) break;
        buf[at++] = BACKSLASH;
        buf[at++] = b[next]!;
        from = next + 1;
      }
    }
    buf[at++] = QUOTE;
    this.#at = at;
  }

  /** A text with non-ASCII characters, written again from `start`: quoted and escaped as a string (arrayElement), then encoded in place. */
  #wide(start: number, s: string): void {
    const quoted = arrayElement(s);
    this.#at = start;
    this.#room(3 * quoted.length);
    this.#at += encoder.encodeInto(quoted, this.#buf.subarray(start)).written;
  }

  /** Room for a separator and `n` more bytes, and the separator. */
  #sep(n: number): void {
    this.#room(n + 1);
    if (this.#first) this.#first = false;
    else this.#buf[this.#at++] = 0x2c;
  }

  #room(n: number): void {
    if (this.#at + n <= this.#buf.length) return;
    const grown = new Uint8Array(Math.max(this.#buf.length * 2, this.#at + n));
    grown.set(this.#buf.subarray(0, this.#at));
    this.#buf = grown;
  }
}
