/** Server-originated messages of the transport itself: S2C notices and connection-level errors. */
import { Outbound, type ImMessage } from "../delivery/ports.ts";
import type { IdGenerator } from "../ids/tsid.ts";
import { stringifyJson } from "../protocol/json.ts";

const ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function randomSegment(len = 8): string {
  const bytes = crypto.getRandomValues(new Uint8Array(len));
  let s = "";
  for (const b of bytes) s += ALNUM[b % ALNUM.length];
  return s;
}

/** A message id `<TYPE>.<tsid>.<ms>.<random>` (spec §2.8). */
export function messageId(type: string, ids: IdGenerator, now: number): string {
  return `${type}.${ids.next()}.${now}.${randomSegment()}`;
}

/** An S2C notice to one user (not stored): action set, msg_type reserved, from "" on the wire. */
export function s2cNotice(
  ids: IdGenerator,
  now: number,
  to: bigint,
  action: string,
  /** An object, or its JSON text already encoded (one encoding for a notice told to many sessions). */
  payload: Record<string, unknown> | string,
  inReplyTo?: string,
): Outbound {
  const msg: ImMessage =
    typeof payload === "string"
      ? { id: messageId("S2C", ids, now), type: "S2C", from: null, to, payload: undefined, payloadJson: payload, action, server_ts: now }
      : { id: messageId("S2C", ids, now), type: "S2C", from: null, to, payload, action, server_ts: now };
  if (inReplyTo !== undefined) msg.in_reply_to = inReplyTo;
  return new Outbound(msg);
}

/**
 * Spec §5.3 / §7.6 top-level error: rejected handshakes (HTTP body) and
 * connection-level errors after the upgrade (always a JSON text frame).
 */
export function connectionError(code: number, title: string, content: string, now: number): string {
  return stringifyJson({ code, payload: { title, content }, server_ts: now });
}
