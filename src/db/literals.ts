/** Array parameters as PostgreSQL array literals: one text parameter, one statement text for any length. */

/** Quoted elements, NULL for null. */
export function arrayLiteral(items: readonly (string | null)[]): string {
  return `{${items.map((s) => (s === null ? "NULL" : `"${s.replace(/[\\"]/g, "\\$&")}"`)).join(",")}}`;
}

/** The same for decimals (ids): no quoting needed, and no per-element work in the driver. */
export const decimalArray = (items: readonly string[]): string => `{${items.join(",")}}`;
