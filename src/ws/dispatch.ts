/**
 * Uplink dispatch (spec §4.5 rules 1–7, §7.6). Acks are recognised before the
 * per-user throttle (they are exempt), business messages are decoded only
 * after it. No frame or message error closes the connection.
 */
import type { ClientAck, DeliveryEngine } from "../delivery/ports.ts";
import type { Logger } from "../log.ts";
import { decodeFrame, errorFrame, FrameType, pongForPing, readU64 } from "../protocol/frame.ts";
import { decodeAck, decodeAckText, decodeMessageBytes, decodeMessageText, frameAckToClientAck } from "../protocol/uplink.ts";
import type { Conn } from "./conn.ts";
import type { Hub } from "./hub.ts";
import { Proto } from "./negotiate.ts";
import { takeToken } from "./throttle.ts";

export interface UplinkDeps {
  readonly engine: DeliveryEngine;
  readonly hub: Hub;
  readonly log: Logger;
  readonly now: () => number;
  readonly msgRate: number;
  readonly msgBurst: number;
  readonly throttleOff: boolean;
  /** S2C to this connection only (refusals, answers). */
  tell(conn: Conn, action: string, payload: Record<string, unknown>, inReplyTo?: string): void;
  /** A C2S refresh_token control message (expiry.ts). */
  refresh(conn: Conn, raw: Record<string, unknown>): void;
}

/** C2S `refresh_token` is the transport's own control message, never a business message. */
export const isRefreshRequest = (raw: Record<string, unknown>): boolean =>
  raw.type === "C2S" && (raw.action === "refresh_token" || raw.msg_type === "refresh_token");

const idOf = (raw: Record<string, unknown> | undefined): string | undefined =>
  typeof raw?.id === "string" ? raw.id : undefined;

// The id of a message that is not valid JSON, when it can still be read (so the refusal can name it).
const ID_IN_TEXT = /"id"\s*:\s*"([^"\\]{1,200})"/;

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
    case FrameType.Ack: {
      const ack = frameAckToClientAck(f.payload, f.flags, conn.deviceId);
      if (ack) d.engine.onAck(conn, ack);
      else conn.write(errorFrame("payload_decode_failed"));
      return;
    }
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
  if (!allowed(d, conn)) return rateLimited(d, conn, idOf(decodeMessageBytes(bytes)));
  const raw = decodeMessageBytes(bytes);
  if (raw) return onRaw(d, conn, raw);
  d.log.warn("ws: undecodable message", { conn: conn.connId, len: bytes.length });
  if (framed) conn.write(errorFrame("payload_decode_failed"));
  else d.tell(conn, "invalid_message", { content: "message is neither a JSON object nor a protobuf message" });
}

function onText(d: UplinkDeps, conn: Conn, text: string): void {
  const ack = decodeAckText(text);
  if (ack !== undefined) return onAck(d, conn, ack, false);
  if (!allowed(d, conn)) {
    const parsed = decodeMessageText(text);
    return rateLimited(d, conn, parsed.ok ? idOf(parsed.raw) : ID_IN_TEXT.exec(text)?.[1]);
  }
  const r = decodeMessageText(text);
  if (r.ok) return onRaw(d, conn, r.raw);
  const content = r.reason === "invalid_json" ? "message is not valid JSON" : "message is not a JSON object";
  d.tell(conn, r.reason, { content }, ID_IN_TEXT.exec(text)?.[1]);
}

function onAck(d: UplinkDeps, conn: Conn, ack: ClientAck | null, framed: boolean): void {
  if (ack) return d.engine.onAck(conn, ack);
  if (framed) conn.write(errorFrame("payload_decode_failed"));
  else d.tell(conn, "invalid_message", { content: "malformed CLIENT_ACK" });
}

function onRaw(d: UplinkDeps, conn: Conn, raw: Record<string, unknown>): void {
  if (isRefreshRequest(raw)) d.refresh(conn, raw);
  else d.engine.onMessage(conn, raw);
}

function allowed(d: UplinkDeps, conn: Conn): boolean {
  if (d.throttleOff) return true;
  const now = d.now();
  const bucket = d.hub.bucketOf(conn.userId, d.msgBurst, now);
  return bucket === undefined || takeToken(bucket, now, d.msgRate, d.msgBurst);
}

/** §7.6: a validation failure answered to that message. */
function rateLimited(d: UplinkDeps, conn: Conn, inReplyTo: string | undefined): void {
  d.tell(conn, "invalid_message", { reason: "rate_limited", content: "too many messages, slow down" }, inReplyTo);
}
