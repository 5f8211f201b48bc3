/**
 * Codecs between `ImMessage` and the wire (spec §2.8, §4.5): JSON text,
 * protobuf (bare on svc-protobuf) and svc.v2 MSG frames. A message is
 * encoded at most once per encoding; the bytes are cached in `Outbound.encoded`
 * (a large push excepted: `largeFrame`).
 * The payload convention and the field mapping are in docs/protocol.md.
 */
import { heldPayloadUtf8, type ChatType, type ClientAck, type ImMessage, type Outbound } from "../model/message.ts";
import { FRAME_HEADER_SIZE, FrameType, MAX_FRAME_PAYLOAD, writeFrameHeader } from "./frame.ts";
import { stringifyJson, utf8 } from "./json.ts";
import { decodeClientAckPb, decodeMessagePb, encodeClientAckPb, encodeMessagePb, isChatType } from "./pb.ts";

// ---- JSON --------------------------------------------------------------------

const q = JSON.stringify as (s: string) => string;

/** The payload's JSON text: the stored/arrived text verbatim when known. */
function payloadText(msg: ImMessage): string | undefined {
  return msg.payloadJson ?? (msg.payload === undefined ? undefined : stringifyJson(msg.payload));
}

/**
 * The §2.8 JSON object as text. Ids are bare exact numbers, `from` is "" for
 * S2C, `payloadJson` is spliced in verbatim and absent optional fields are
 * omitted. Throws only when a payload without `payloadJson` is not serialisable.
 */
export function messageJson(msg: ImMessage): string {
  let s = `{"id":${q(msg.id)},"type":${q(msg.type)},"from":${msg.from === null ? '""' : msg.from.toString()},"to":${msg.to.toString()}`;
  const payload = payloadText(msg);
  if (payload !== undefined) s += `,"payload":${payload}`;
  if (msg.created_at !== undefined) {
    s += `,"created_at":${typeof msg.created_at === "string" ? q(msg.created_at) : String(msg.created_at)}`;
  }
  s += `,"server_ts":${String(msg.server_ts)}`;
  if (msg.action !== undefined) s += `,"action":${q(msg.action)}`;
  if (msg.msg_type !== undefined) s += `,"msg_type":${q(msg.msg_type)}`;
  if (msg.e2ee !== undefined) s += `,"e2ee":${stringifyJson(msg.e2ee)}`;
  if (msg.in_reply_to !== undefined) s += `,"in_reply_to":${q(msg.in_reply_to)}`;
  return `${s}}`;
}

// ---- protobuf (wire codec in pb.ts) ----------------------------------------------

/**
 * Protobuf encoding. `payload` carries the UTF-8 of the payload's JSON text
 * (an encrypted payload is thus a JSON string literal of the Base64
 * ciphertext, quotes included). Throws when the message has no protobuf form
 * (a type or msg_type outside the enums, an id outside sint64).
 */
export const messageProto = (msg: ImMessage): Uint8Array => encodeMessagePb(msg);

/**
 * Protobuf → a plain object with the field names and value types of the
 * parsed JSON message (type and msg_type as strings, from/to as bigint,
 * payload parsed), so the delivery engine validates one shape. Proto3
 * defaults (empty strings, 0) are left out, as an absent JSON field would be.
 * Undefined when the bytes are not a protobuf Message with a known type.
 */
export const decodeProtoMessage = (bytes: Uint8Array): Record<string, unknown> | undefined => decodeMessagePb(bytes);

// ---- client acknowledgements ---------------------------------------------------

const ACK_PREFIX = utf8("CLIENT_ACK,");

/** Does this payload start with `CLIENT_ACK,`? Reads the bytes in place. */
export function isClientAckPayload(bytes: Uint8Array): boolean {
  if (bytes.length < ACK_PREFIX.length) return false;
  for (let i = 0; i < ACK_PREFIX.length; i++) if (bytes[i] !== ACK_PREFIX[i]) return false;
  return true;
}

/** `CLIENT_ACK,<type>,<msg_id>,<did>` (surrounding whitespace ignored) → ClientAck. */
export function parseClientAckText(text: string): ClientAck | undefined {
  const parts = text.trim().split(",");
  if (parts.length !== 4 || parts[0] !== "CLIENT_ACK") return undefined;
  const [, type, msgId, did] = parts as [string, string, string, string];
  if (!isChatType(type) || msgId === "" || did === "") return undefined;
  return { type, msgId, did };
}

const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/** The text form straight from frame payload bytes (non-UTF-8 → undefined). */
export function parseClientAckBytes(bytes: Uint8Array): ClientAck | undefined {
  if (!isClientAckPayload(bytes)) return undefined;
  try {
    return parseClientAckText(utf8Strict.decode(bytes));
  } catch {
    return undefined;
  }
}

/** Is this protobuf a ClientAck (field 2 = CLIENT_ACK), complete or not? */
export const isProtoClientAck = (bytes: Uint8Array): boolean => decodeClientAckPb(bytes) !== undefined;

/** Protobuf ClientAck → ClientAck; undefined unless it is one, complete. */
export const decodeProtoClientAck = (bytes: Uint8Array): ClientAck | undefined => decodeClientAckPb(bytes) ?? undefined;

/** Client side: the protobuf business acknowledgement. */
export const clientAckProto = (ack: { type: ChatType; msgId: string; did: string }): Uint8Array => encodeClientAckPb(ack);

/** Client side: the text business acknowledgement. */
export const clientAckText = (ack: { type: ChatType; msgId: string; did: string }): string =>
  `CLIENT_ACK,${ack.type},${ack.msgId},${ack.did}`;

// ---- Outbound: encode once per encoding ------------------------------------------

/**
 * A binary encoding, or the JSON text it fell back to: a `string` result
 * means "send this as a text frame" (spec §4.5, protobuf encoding failed).
 */
export type Encoded = Uint8Array | string;

export function outboundJson(out: Outbound): string {
  const cached = out.encoded.json;
  if (typeof cached === "string") return cached;
  return (out.encoded.json = messageJson(out.msg));
}

/** svc.v2 MSG frame Type for a message type. */
export function msgFrameType(type: string): number {
  switch (type) {
    case "C2C":
      return FrameType.MsgC2C;
    case "C2G":
      return FrameType.MsgC2G;
    case "C2S":
      return FrameType.MsgC2S;
    default:
      return FrameType.MsgS2C;
  }
}

/**
 * Fills `v2` (and `pb` when it differs from a view of it) from ONE buffer: the
 * protobuf is encoded behind 9 bytes of room and the header is written into
 * them; `pb` is the view past the header, made only when a svc-protobuf
 * connection asks (outboundProto). Either falls back to the JSON text when
 * protobuf cannot hold the message; `v2` alone does when the frame would pass 16 MiB.
 */
function encodeBinary(out: Outbound): void {
  let buf: Uint8Array;
  try {
    buf = encodeMessagePb(out.msg, FRAME_HEADER_SIZE);
  } catch {
    out.encoded.pb = out.encoded.v2 = outboundJson(out);
    return;
  }
  if (framedInPlace(buf, out.msg.type)) out.encoded.v2 = buf;
  else {
    out.encoded.pb = buf.subarray(FRAME_HEADER_SIZE);
    out.encoded.v2 = outboundJson(out);
  }
}

/**
 * Writes the svc.v2 MSG header into the room `encodeMessagePb` left in front
 * of the protobuf; false (nothing written) when a frame cannot hold it.
 */
function framedInPlace(buf: Uint8Array, type: string): boolean {
  const len = buf.length - FRAME_HEADER_SIZE;
  if (len > MAX_FRAME_PAYLOAD) return false;
  writeFrameHeader(buf, 0, msgFrameType(type), 0, len);
  return true;
}

/** Bare protobuf (svc-protobuf); the JSON text when the message has no protobuf form. */
export function outboundProto(out: Outbound): Encoded {
  if (out.encoded.pb === undefined) {
    if (out.encoded.v2 === undefined) encodeBinary(out);
    // Not set by encodeBinary: v2 is the framed protobuf, pb the view past its header.
    out.encoded.pb ??= (out.encoded.v2 as Uint8Array).subarray(FRAME_HEADER_SIZE);
  }
  return out.encoded.pb;
}

/** A push whose payload the node holds as at least this many bytes is encoded into the one kept buffer (`largeFrame`). */
export const LARGE_PUSH_BYTES = 1 << 20;

/**
 * The one buffer large pushes are encoded into, kept between them. A fresh
 * 16 MiB buffer per push cost ~4,100 page faults, ~9 ms of blocked event
 * loop, where writing into pages already mapped costs ~2 ms
 * (bench/alloc-faults.ts, bench/FINDINGS.md 2026-11-26 night).
 */
let largeBuffer = new Uint8Array(0);
/** Grown by doubling (up to one largest frame), so pushes of rising sizes do not map a new buffer each. */
const takeLarge = (size: number): Uint8Array =>
  largeBuffer.length >= size
    ? largeBuffer
    : (largeBuffer = new Uint8Array(Math.max(size, Math.min(largeBuffer.length * 2, FRAME_HEADER_SIZE + MAX_FRAME_PAYLOAD))));

/** Which message the kept buffer holds (weakly: a delivered message is not kept alive by it), and its bytes. */
let largeHolds: { out: WeakRef<Outbound>; frame: Uint8Array; framed: boolean } | undefined;

/**
 * svc.v2 frame or bare protobuf of a message with a large held payload,
 * written into the kept buffer: valid only until another message's
 * `largeFrame`, so the caller sends it at once (Bun copies what the socket does
 * not take) and it is never cached on the Outbound. The same message asked
 * for again meanwhile (the next device of a fan-out, svc.v2 or svc-protobuf)
 * is not encoded again; a retry after another large push is (a copy into
 * mapped pages). undefined for every other message (the cached encodings),
 * and for one protobuf or the frame cannot hold.
 */
export function largeFrame(out: Outbound, form: "v2" | "pb"): Uint8Array | undefined {
  const held = heldPayloadUtf8(out.msg);
  if (!held || held.length < LARGE_PUSH_BYTES) return undefined;
  let holds = largeHolds?.out.deref() === out ? largeHolds : undefined;
  if (!holds) {
    largeHolds = undefined; // the buffer is about to be written: it holds no one until this encode is complete
    let frame: Uint8Array;
    try {
      frame = encodeMessagePb(out.msg, FRAME_HEADER_SIZE, takeLarge);
    } catch {
      return undefined; // no protobuf form: the JSON text, as `encodeBinary` answers
    }
    holds = largeHolds = { out: new WeakRef(out), frame, framed: framedInPlace(frame, out.msg.type) };
  }
  if (form === "pb") return holds.frame.subarray(FRAME_HEADER_SIZE);
  return holds.framed ? holds.frame : undefined;
}

/** svc.v2: protobuf inside a MSG frame, flags 0; the JSON text when protobuf (or the frame) cannot hold it. */
export function outboundV2Frame(out: Outbound): Encoded {
  if (out.encoded.v2 === undefined) encodeBinary(out);
  return out.encoded.v2!;
}
