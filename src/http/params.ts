import type { Context } from "hono";
import type { z } from "zod";
import { FailureError } from "../domain/errors.ts";
import { MAX_JSON_DEPTH, parseJson } from "../protocol/json.ts";

const BODY = "ibis.body";

/**
 * The name of the first string (key or value, at any depth) holding a NUL
 * character, or undefined. PostgreSQL text cannot store NUL: refused here,
 * where every REST input passes, instead of failing in SQL as a 500.
 */
function nulField(root: Record<string, unknown>): string | undefined {
  const stack: [unknown, string][] = [[root, ""]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === "string") {
      if (v.includes("\0")) return path || "body";
    } else if (v !== null && typeof v === "object") {
      for (const [k, item] of Object.entries(v)) {
        const at = path ? `${path}.${k}` : k;
        if (k.includes("\0")) return at;
        stack.push([item, at]);
      }
    }
  }
  return undefined;
}

function refuseNul(input: Record<string, unknown>): Record<string, unknown> {
  const field = nulField(input);
  if (field !== undefined) throw new FailureError({ kind: "bad_request", msg: `${field}: must not contain NUL characters` });
  return input;
}

/**
 * The request body as an object (JSON through the project codec, or a form),
 * parsed once per request. Empty body → {}. Malformed JSON, JSON nested
 * deeper than MAX_JSON_DEPTH, or a NUL character anywhere in it → 400.
 */
export async function body(c: Context): Promise<Record<string, unknown>> {
  const cached = c.get(BODY as never) as Record<string, unknown> | undefined;
  if (cached) return cached;
  let out: Record<string, unknown> = {};
  const type = c.req.header("content-type") ?? "";
  if (type.includes("application/x-www-form-urlencoded") || type.includes("multipart/form-data")) {
    out = Object.fromEntries(Object.entries(await c.req.parseBody()).filter(([, v]) => typeof v === "string"));
  } else {
    const text = await c.req.text();
    if (text.trim() !== "") {
      let value: unknown;
      try {
        value = parseJson(text, MAX_JSON_DEPTH);
      } catch (e) {
        const deep = e instanceof SyntaxError && e.message.startsWith("JSON nested");
        throw new FailureError({ kind: "bad_request", msg: deep ? e.message : "malformed JSON body" });
      }
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        throw new FailureError({ kind: "bad_request", msg: "JSON body must be an object" });
      }
      out = value as Record<string, unknown>;
    }
  }
  c.set(BODY as never, refuseNul(out) as never);
  return out;
}

/** The query parameters (last value of each); a NUL character anywhere → 400. */
export function query(c: Context): Record<string, string> {
  return refuseNul({ ...c.req.query() }) as Record<string, string>;
}

/** Query parameters merged with the body (body wins): for endpoints that take either. NUL anywhere → 400. */
export async function params(c: Context): Promise<Record<string, unknown>> {
  const merged: Record<string, unknown> = query(c);
  if (c.req.method !== "GET" && c.req.method !== "HEAD") Object.assign(merged, await body(c));
  return merged;
}

/** Validates input with zod; a failure is a 400 naming the first bad field. */
export function input<S extends z.ZodType>(schema: S, data: unknown): z.output<S> {
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length ? `${issue.path.join(".")}: ` : "";
  throw new FailureError({ kind: "bad_request", msg: `${where}${issue.message}` });
}
