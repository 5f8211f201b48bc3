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
