import { z } from "zod";
import { toId } from "../ids/tsid.ts";

/** An entity id from JSON number (exact), safe number or decimal string → bigint (spec §2.1.1). */
export const zId = z
  .unknown()
  .describe("64-bit id: an exact JSON integer or a decimal string")
  .transform((v, ctx) => {
    const id = toId(v);
    if (id === undefined) {
      ctx.addIssue({ code: "custom", message: "must be a 64-bit id (integer or decimal string)" });
      return z.NEVER;
    }
    return id;
  });

/** Booleans as they arrive from query strings and loose clients: true/false/1/0. */
export const zBool = z.union([z.boolean(), z.number(), z.string()]).transform((v, ctx) => {
  if (v === true || v === 1 || v === "1" || v === "true") return true;
  if (v === false || v === 0 || v === "0" || v === "false") return false;
  ctx.addIssue({ code: "custom", message: "must be true/false or 1/0" });
  return z.NEVER;
});

const DECIMAL = /^\s*-?\d+\s*$/;

/**
 * A safe integer from a JSON integer or a decimal string (query values), else
 * undefined. Stricter than Number(): true, "", [2], "0x10", "1e1" and 2.5 are
 * not integers a client meant to send.
 */
export function integerOf(v: unknown): number | undefined {
  const n = typeof v === "number" ? v : typeof v === "string" && DECIMAL.test(v) ? Number(v) : undefined;
  return n !== undefined && Number.isSafeInteger(n) ? n : undefined;
}

/** `integerOf` as a schema: chain bounds with `.pipe(z.number().min(…))`. */
export const zInt = z.unknown().transform((v, ctx) => {
  const n = integerOf(v);
  if (n === undefined) {
    ctx.addIssue({ code: "custom", message: "must be an integer (JSON number or decimal string)" });
    return z.NEVER;
  }
  return n;
});

/**
 * A field declared for the document but passed through as sent, because the
 * handler applies a rule zod does not express (an id under several alias
 * names, first present wins; a paging number that falls back to a default).
 * Undeclared keys are stripped by the route's schema, so a handler cannot read
 * a field the document does not list.
 */
export const zAsSent = (description: string) => z.unknown().optional().describe(description);

/** An id under one of several alias names (`requireId`/`optionalId` pick the first present). */
export const zIdAlias = (note = "") => zAsSent(`64-bit id (integer or decimal string)${note ? `; ${note}` : ""}`);
