/**
 * Uplink dispatch (spec §4.5 rules 1–7, §7.6). Acks are recognised before the
 * per-user message throttle (they are exempt from it and count in a cheap
 * bucket of their own); business messages are measured against the size cap
 * and the message and byte rates before they are decoded. No frame or message
 * error closes the connection.
 */
import type { ClientAck, DeliveryEngine } from "../delivery/ports.ts";
import type { Logger } from "../log.ts";
import { decodeFrame, errorFrame, FrameType, pongForPing, readU64 } from "../protocol/frame.ts";
import { decodeUplinkBytes, parseJsonSharing } from "../protocol/json-sharing.ts";
import {
  decodeAck,
  decodeAckText,
  decodeMessageText,
  frameAckToClientAck,
  messageIdInBytes,
  messageIdInText,
} from "../protocol/uplink.ts";
import type { Conn } from "./conn.ts";
import { Proto } from "./negotiate.ts";
import type { UserThrottles } from "./throttle.ts";

export interface UplinkDeps {
  readonly engine: DeliveryEngine;
  readonly log: Logger;
  readonly now: () => number;
  readonly throttles: UserThrottles;
  /** Largest business message, bytes as received (checked even with the throttles off). */
  readonly msgMaxBytes: number;
  readonly throttleOff: boolean;
  /** S2C to this connection only (refusals, answers). */
  tell(conn: Conn, action: string, payload: Record<string, unknown>, inReplyTo?: string): void;
  /** A C2S refresh_token control message (expiry.ts). */
  refresh(conn: Conn, raw: Record<string, unknown>): void;
}

/** C2S `refresh_token` is the transport's own control message, never a business message. */
export const isRefreshRequest = (raw: Record<string, unknown>): boolean =>
  raw.type === "C2S" && (raw.action === "refresh_token" || raw.msg_type === "refresh_token");

/** One pong buffer for the whole node: Bun copies on send, so it is rewritten for every ping. */
const PONG = new Uint8Array(11);

export function dispatch(d: UplinkDeps, conn: Conn, message: string | Uint8Array): void {
  if (typeof message === "string") return onText(d, conn, message);
  if (conn.proto === Proto.V2) {
    const pong = pongForPing(message, PONG);
    if (pong) return void conn.writeTransient(pong);
    return onFrame(d, conn, message);
  }
  return onBinaryMessage(d, conn, message, false);
}

function onFrame(d: UplinkDeps, conn: Conn, bytes: Uint8Array): void {
  const f = decodeFrame(bytes);
  if (!f.ok) {
    conn.write(errorFrame(f.reason));
    return;
  }
  switch (f.type) {
    case FrameType.HeartbeatPing:
      // A well-formed ping was answered in `dispatch` (pongForPing): this one's payload is not a 2-byte Seq.
      d.log.warn("ws: malformed heartbeat ping dropped", { conn: conn.connId, len: f.payload.length });
      return;
    case FrameType.HeartbeatPong:
      return; // any traffic keeps the socket alive; nothing to match
    case FrameType.Ack:
      return onAck(d, conn, frameAckToClientAck(f.payload, f.flags, conn.deviceId) ?? null, true);
    case FrameType.Nack:
      d.log.info("ws: NACK", { conn: conn.connId, user: conn.userId, msg: readU64(f.payload)?.toString() });
      return;
    default:
      return onBinaryMessage(d, conn, f.payload, true); // MSG_C2C/C2G/C2S/S2C
  }
}

/** A svc.v2 MSG payload or a svc-protobuf / svc-json binary message. */
function onBinaryMessage(d: UplinkDeps, conn: Conn, bytes: Uint8Array, framed: boolean): void {
  const ack = decodeAck(bytes);
  if (ack !== undefined) return onAck(d, conn, ack, framed);
  if (bytes.length > d.msgMaxBytes) return tooLarge(d, conn, bytes.length, messageIdInBytes(bytes));
  if (!allowed(d, conn, bytes.length)) return rateLimited(d, conn, messageIdInBytes(bytes));
  const raw = decodeUplinkBytes(bytes);
  if (raw) return onRaw(d, conn, raw);
  d.log.warn("ws: undecodable message", { conn: conn.connId, len: bytes.length });
  if (framed) conn.write(errorFrame("payload_decode_failed"));
  else d.tell(conn, "invalid_message", { content: "message is neither a JSON object nor a protobuf message" });
}

function onText(d: UplinkDeps, conn: Conn, text: string): void {
  const ack = decodeAckText(text);
  if (ack !== undefined) return onAck(d, conn, ack, false);
  // UTF-8 takes at least one byte per UTF-16 unit and at most three: exact length only when it matters.
  const size = text.length * 3 <= d.msgMaxBytes ? text.length : Buffer.byteLength(text);
  if (size > d.msgMaxBytes) return tooLarge(d, conn, size, messageIdInText(text));
  if (!allowed(d, conn, size)) return rateLimited(d, conn, messageIdInText(text));
  const r = decodeMessageText(text, parseJsonSharing);
  if (r.ok) return onRaw(d, conn, r.raw);
  const content = r.reason === "invalid_json" ? "message is not valid JSON" : "message is not a JSON object";
  d.tell(conn, r.reason, { content }, messageIdInText(text));
}

function onAck(d: UplinkDeps, conn: Conn, ack: ClientAck | null, framed: boolean): void {
  if (!d.throttleOff && !d.throttles.ack(conn.userId, d.now())) {
    return d.tell(conn, "invalid_message", { reason: "rate_limited", content: "too many acknowledgements, slow down" }, ack?.msgId);
  }
  if (ack) return d.engine.onAck(conn, ack);
  if (framed) conn.write(errorFrame("payload_decode_failed"));
  else d.tell(conn, "invalid_message", { content: "malformed CLIENT_ACK" });
}

function onRaw(d: UplinkDeps, conn: Conn, raw: Record<string, unknown>): void {
  if (isRefreshRequest(raw)) d.refresh(conn, raw);
  else d.engine.onMessage(conn, raw);
}

function allowed(d: UplinkDeps, conn: Conn, size: number): boolean {
  return d.throttleOff || d.throttles.message(conn.userId, size, d.now());
}

function tooLarge(d: UplinkDeps, conn: Conn, size: number, inReplyTo: string | undefined): void {
  d.tell(conn, "invalid_message", { reason: "too_large", content: `message of ${size} bytes is over the ${d.msgMaxBytes}-byte limit` }, inReplyTo);
}

/** §7.6: a validation failure answered to that message. */
function rateLimited(d: UplinkDeps, conn: Conn, inReplyTo: string | undefined): void {
  d.tell(conn, "invalid_message", { reason: "rate_limited", content: "too many messages, slow down" }, inReplyTo);
}
