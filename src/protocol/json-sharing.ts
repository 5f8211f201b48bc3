/**
 * A large JSON text parsed without copying its long strings (the uplink of
 * large messages). Apart from json.ts: only the server needs it, and the
 * browser SDK bundles json.ts.
 */
import { LARGE_PAYLOAD_CHARS, parseJson, skipSpace, stringEnd } from "./json.ts";

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
