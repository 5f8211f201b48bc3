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
