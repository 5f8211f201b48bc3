import { toId } from "../../ids/tsid.ts";
import { fail, ok, type Result } from "../errors.ts";

/** The first of `keys` present in `input` (aliases such as user_id/uid, gid/group_id). */
export function pick(input: Record<string, unknown>, ...keys: string[]): unknown {
  for (const k of keys) {
    const v = input[k];
    if (v !== undefined && v !== null && v !== "") return v;
  }
  return undefined;
}

/** An id under any of `keys`: bigint, undefined when absent, null when present but not an id. */
export function pickId(input: Record<string, unknown>, ...keys: string[]): bigint | undefined | null {
  const v = pick(input, ...keys);
  if (v === undefined) return undefined;
  return toId(v) ?? null;
}

/** Most ids one list may carry (the §2.1.7 batch, group invitations, proxy keys): each id is work for the server. */
export const MAX_ID_LIST = 1000;

/** A list of ids (array, or comma-separated string); null when any entry is not an id or there are over MAX_ID_LIST. */
export function idList(v: unknown): bigint[] | null {
  if (v === undefined || v === null || v === "") return [];
  const items = Array.isArray(v) ? v : typeof v === "string" ? v.split(",", MAX_ID_LIST + 1) : [v];
  if (items.length > MAX_ID_LIST) return null;
  const out: bigint[] = [];
  for (const item of items) {
    const id = toId(item);
    if (id === undefined) return null;
    out.push(id);
  }
  return out;
}

/** A required id under any of `keys` (first key names it in the error). */
export function requireId(input: Record<string, unknown>, ...keys: string[]): Result<bigint> {
  const id = pickId(input, ...keys);
  if (id === undefined) return fail("bad_request", `${keys.join(" or ")} is required`);
  if (id === null) return fail("bad_request", `${keys[0]}: must be a 64-bit id (integer or decimal string)`);
  return ok(id);
}

/** An optional id under any of `keys`; present but malformed is refused. */
export function optionalId(input: Record<string, unknown>, ...keys: string[]): Result<bigint | undefined> {
  const id = pickId(input, ...keys);
  if (id === null) return fail("bad_request", `${keys[0]}: must be a 64-bit id (integer or decimal string)`);
  return ok(id);
}
