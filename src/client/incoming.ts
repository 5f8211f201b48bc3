/** Client side: what arrives on an Ibis socket, decoded per sub-protocol. */
import { decodeFrame, DOWNLINK_FRAME_TYPES, FrameType, readSeq } from "../protocol/frame.ts";
import { tryParseJson } from "../protocol/json.ts";
import { decodeMessageBytes } from "../protocol/uplink.ts";

export type Incoming =
  /** A §2.8 message (JSON text, protobuf, or a svc.v2 MSG frame's payload), field names as in JSON. */
  | { readonly kind: "message"; readonly msg: Record<string, any>; readonly frameType?: number }
  /** svc.v2 ERROR frame. */
  | { readonly kind: "error"; readonly reason: string }
  | { readonly kind: "ping"; readonly seq: number }
  | { readonly kind: "pong"; readonly seq: number }
  /** Connection-level error: top-level {code, payload:{title, content}} JSON text. */
  | { readonly kind: "conn_error"; readonly code: number; readonly title: string; readonly content: string }
  /** Bytes the SDK could not read (reported, never thrown). */
  | { readonly kind: "undecodable"; readonly detail: string }
  | { readonly kind: "open"; readonly protocol: string }
  | { readonly kind: "close"; readonly code: number; readonly reason: string };

const utf8 = new TextDecoder();
const isObject = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);

export function decodeText(text: string): Incoming {
  const parsed = tryParseJson(text);
  if (!parsed.ok || !isObject(parsed.value)) return { kind: "undecodable", detail: "text is not a JSON object" };
  const v = parsed.value;
  if (typeof v.type === "string") return { kind: "message", msg: v };
  if (typeof v.code === "number" && isObject(v.payload)) {
    return { kind: "conn_error", code: v.code, title: String(v.payload.title ?? ""), content: String(v.payload.content ?? "") };
  }
  return { kind: "undecodable", detail: "JSON object without type" };
}

/** A binary message: a svc.v2 frame when `framed`, else bare protobuf (or JSON bytes). */
export function decodeBinary(bytes: Uint8Array, framed: boolean): Incoming {
  if (!framed) {
    const msg = decodeMessageBytes(bytes);
    return msg ? { kind: "message", msg } : { kind: "undecodable", detail: "not a protobuf message" };
  }
  const f = decodeFrame(bytes, DOWNLINK_FRAME_TYPES);
  if (!f.ok) return { kind: "undecodable", detail: f.reason };
  switch (f.type) {
    case FrameType.HeartbeatPing:
    case FrameType.HeartbeatPong: {
      const seq = readSeq(f.payload);
      if (seq === undefined) return { kind: "undecodable", detail: "heartbeat without uint16 seq" };
      return { kind: f.type === FrameType.HeartbeatPing ? "ping" : "pong", seq };
    }
    case FrameType.Error:
      return { kind: "error", reason: utf8.decode(f.payload) };
    default: {
      const msg = decodeMessageBytes(f.payload);
      return msg ? { kind: "message", msg, frameType: f.type } : { kind: "undecodable", detail: "payload_decode_failed" };
    }
  }
}
