/**
 * Uplink dispatch (spec §4.5 rules 1–7, §7.6). Acks are recognised before the
 * per-user message throttle (they are exempt from it and count in a cheap
 * bucket of their own); business messages are measured against the size cap
 * and the message and byte rates before they are decoded. No frame or message
 * error closes the connection.
 */
import type { ClientAck, DeliveryEngine } from "../delivery/ports.ts";
import type { Logger } from "../log.ts";
import { decodeUplinkFrame, errorFrame, FRAME_HEADER_SIZE, FrameType, pongForPing, readU64 } from "../protocol/frame.ts";
import { CleanBlocks, decodeUplinkBytes, parseJsonSharing } from "../protocol/json-sharing.ts";
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

/**
 * A binary business message at least this large is scanned for escapes and
 * control characters in slices, one per turn of the event loop, before it is
 * decoded (`CleanBlocks`): in one piece the scan of 16 MiB blocked every
 * other socket of the node for ~8 ms (bench/FINDINGS.md).
 */
const SCAN_AHEAD_BYTES = 1 << 20;
/** What one turn scans: ~0.5 ms. */
const SCAN_SLICE_BYTES = 1 << 20;
/** Held uplinks behind a scan, in largest messages, before more are refused as rate_limited (a client outrunning the scan). */
const HELD_MAX_MESSAGES = 4;

export function dispatch(d: UplinkDeps, conn: Conn, message: string | Uint8Array): void {
  if (typeof message !== "string" && conn.proto === Proto.V2) {
    const pong = pongForPing(message, PONG);
    if (pong) return void conn.writeTransient(pong);
  }
  if (conn.held) return hold(d, conn, message);
  handle(d, conn, message);
}

/** An uplink in its turn (pings were answered on arrival). */
function handle(d: UplinkDeps, conn: Conn, message: string | Uint8Array): void {
  if (typeof message === "string") return onText(d, conn, message);
  if (conn.proto === Proto.V2) return onFrame(d, conn, message);
  return onBinaryMessage(d, conn, message, false);
}

/** Behind a large message being scanned: a connection's uplinks are handled in the order they arrived. */
function hold(d: UplinkDeps, conn: Conn, message: string | Uint8Array): void {
  const held = conn.held!;
  const size = message.length;
  if (held.bytes + size > HELD_MAX_MESSAGES * d.msgMaxBytes) {
    const id = typeof message === "string" ? messageIdInText(message) : messageIdInBytes(conn.proto === Proto.V2 ? message.subarray(FRAME_HEADER_SIZE) : message);
    return rateLimited(d, conn, id);
  }
  held.messages.push(message);
  held.bytes += size;
}

/** Scans `bytes` a slice a turn, then decodes it and handles what arrived meanwhile. */
function scanAhead(d: UplinkDeps, conn: Conn, bytes: Uint8Array, framed: boolean): void {
  const clean = new CleanBlocks(bytes);
  conn.held = { messages: [], bytes: 0 };
  const next = () => {
    if (conn.closing) return void (conn.held = undefined);
    if (!clean.step(SCAN_SLICE_BYTES)) return void setImmediate(next);
    const { messages } = conn.held!;
    conn.held = undefined;
    guarded(d, conn, () => decoded(d, conn, decodeUplinkBytes(bytes, clean), bytes.length, framed));
    for (let i = 0; i < messages.length; i++) {
      if (conn.closing) return;
      const again = conn.held as Conn["held"]; // set by a handle() below
      if (again) {
        // Another large one began a scan: the rest wait behind it, before anything newer.
        const rest = messages.slice(i);
        conn.held = { messages: rest.concat(again.messages), bytes: again.bytes + rest.reduce((n, m) => n + m.length, 0) };
        return;
      }
      guarded(d, conn, () => handle(d, conn, messages[i]!));
    }
  };
  next();
}

/** As Bun's `message` callback (src/ws/index.ts) guards a dispatch: one uplink's failure is logged, the rest go on. */
function guarded(d: UplinkDeps, conn: Conn, run: () => void): void {
  try {
    run();
  } catch (e) {
    d.log.error("ws: dispatch failed", { conn: conn.connId, err: e as Error });
  }
}

function onFrame(d: UplinkDeps, conn: Conn, bytes: Uint8Array): void {
  const f = decodeUplinkFrame(bytes);
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
  if (bytes.length >= SCAN_AHEAD_BYTES) return scanAhead(d, conn, bytes, framed);
  decoded(d, conn, decodeUplinkBytes(bytes), bytes.length, framed);
}

function decoded(d: UplinkDeps, conn: Conn, raw: Record<string, unknown> | undefined, size: number, framed: boolean): void {
  if (raw) return onRaw(d, conn, raw);
  d.log.warn("ws: undecodable message", { conn: conn.connId, len: size });
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
