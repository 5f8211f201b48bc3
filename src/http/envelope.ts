import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { stringifyJson } from "../protocol/json.ts";

/** Spec §2.1: every REST answer. */
export interface Envelope<T = unknown> {
  code: number;
  msg: string;
  sv_ts: number;
  payload: T;
}

export const SUCCESS_MSG = "success.";

/** JSON through the project codec: bigint ids leave as exact JSON numbers. */
export function json(c: Context, body: unknown, status: ContentfulStatusCode = 200): Response {
  return c.body(stringifyJson(body), status, { "content-type": "application/json; charset=utf-8" });
}

export function envelope<T>(code: number, msg: string, payload: T): Envelope<T> {
  return { code, msg, sv_ts: Date.now(), payload };
}

/** Success answer; `payload` defaults to an empty object (spec §2.1). */
export function ok(c: Context, payload: unknown = {}): Response {
  return json(c, envelope(0, SUCCESS_MSG, payload));
}

/**
 * Spec §5.3 / §7.6: requests rejected before business handling get a
 * top-level {code, payload:{title,content}, server_ts} (no envelope msg).
 */
export function preBusinessError(code: number, title: string, content: string) {
  return { code, payload: { title, content }, server_ts: Date.now() };
}
