/**
 * PostgreSQL array literals as one text parameter (`$1::bigint[]`, `$2::text[]`):
 * one statement text for any length, and no per-element binding work in the
 * driver (which otherwise escapes every element of a JS array).
 */
export const decimalArray = (xs: readonly string[]): string => `{${xs.join(",")}}`;

/** Quoted elements, `\` and `"` escaped. */
export const textArray = (xs: readonly string[]): string => `{${xs.map((s) => `"${s.replace(/[\\"]/g, "\\$&")}"`).join(",")}}`;
