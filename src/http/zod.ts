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
