/**
 * Codecs between `ImMessage` and the wire (spec §2.8, §4.5): JSON text,
 * protobuf (bare on svc-protobuf) and svc.v2 MSG frames. A message is
 * encoded at most once per encoding; the bytes are cached in `Outbound.encoded`.
 * The payload convention and the field mapping are in docs/protocol.md.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import type { ChatType, ClientAck, E2eeMeta, ImMessage, Outbound } from "../delivery/ports.ts";
import {
  ClientAckSchema,
  type E2ee,
  MessageSchema,
  MsgDirection,
  MsgType,
} from "../gen/ibis/v2/message_pb.ts";
import { encodeFrame, FrameType } from "./frame.ts";
import { parseJsonBytes, stringifyJson, utf8 } from "./json.ts";

// ---- enum tables -------------------------------------------------------------

function invert<K extends string, V extends number>(table: Record<K, V>): Map<V, K> {
  return new Map(Object.entries(table).map(([k, v]) => [v as V, k as K]));
}

const DIRECTION: Record<string, MsgDirection> = {
  C2C: MsgDirection.C2C,
  C2G: MsgDirection.C2G,
  S2C: MsgDirection.S2C,
  C2S: MsgDirection.C2S,
  CLIENT_ACK: MsgDirection.CLIENT_ACK,
  CLIENT_ACK_CONFIRM: MsgDirection.CLIENT_ACK_CONFIRM,
  C2C_SERVER_ACK: MsgDirection.C2C_SERVER_ACK,
  C2G_SERVER_ACK: MsgDirection.C2G_SERVER_ACK,
  C2S_SERVER_ACK: MsgDirection.C2S_SERVER_ACK,
};
const DIRECTION_NAME = invert(DIRECTION);

const MSG_TYPE: Record<string, MsgType> = {
  "": MsgType.UNSPECIFIED,
  text: MsgType.TEXT,
  textStream: MsgType.TEXT_STREAM,
  image: MsgType.IMAGE,
  imageMulti: MsgType.IMAGE_MULTI,
  file: MsgType.FILE,
  location: MsgType.LOCATION,
  voice: MsgType.VOICE,
  video: MsgType.VIDEO,
  system: MsgType.SYSTEM,
  quote: MsgType.QUOTE,
  revoked: MsgType.REVOKED,
  visitCard: MsgType.VISIT_CARD,
  webrtcAudio: MsgType.WEBRTC_AUDIO,
  webrtcVideo: MsgType.WEBRTC_VIDEO,
  custom: MsgType.CUSTOM,
  unsupported: MsgType.UNSUPPORTED,
};
const MSG_TYPE_NAME = invert(MSG_TYPE);

const CHAT_TYPES: ReadonlySet<string> = new Set<ChatType>(["C2C", "C2G", "C2S", "S2C"]);
const isChatType = (v: string): v is ChatType => CHAT_TYPES.has(v);
const own = <T>(table: Record<string, T>, key: string): T | undefined =>
  Object.hasOwn(table, key) ? table[key] : undefined;

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

// ---- protobuf ----------------------------------------------------------------

const EMPTY = new Uint8Array(0);
const DIGITS = /^\d+$/;

/** created_at as ms: integers as they are, RFC 3339 strings converted, anything else 0 (absent). */
function createdAtMs(v: string | number | undefined): bigint {
  if (typeof v === "number") return Number.isFinite(v) ? BigInt(Math.trunc(v)) : 0n;
  if (typeof v !== "string" || v === "") return 0n;
  if (DIGITS.test(v)) return BigInt(v);
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? 0n : BigInt(ms);
}

function e2eeProto(e: E2eeMeta) {
  return {
    e2ee: e.e2ee,
    e2eeVer: e.e2ee_ver,
    e2eeSuite: e.e2ee_suite,
    nonce: e.nonce,
    keys: e.keys.map((k) => ({ did: k.did, kid: k.kid, wrapAlg: k.wrap_alg, ek: k.ek })),
  };
}

/**
 * Protobuf encoding. `payload` carries the UTF-8 of the payload's JSON text
 * (an encrypted payload is thus a JSON string literal of the Base64
 * ciphertext, quotes included). Throws when the message has no protobuf form
 * (a type or msg_type outside the enums, an id outside sint64).
 */
export function messageProto(msg: ImMessage): Uint8Array {
  const type = own(DIRECTION, msg.type);
  if (type === undefined) throw new TypeError(`type ${msg.type} has no protobuf form`);
  const msgType = own(MSG_TYPE, msg.msg_type ?? "");
  if (msgType === undefined) throw new TypeError(`msg_type ${msg.msg_type} has no protobuf form`);
  const payload = payloadText(msg);
  return toBinary(
    MessageSchema,
    create(MessageSchema, {
      id: msg.id,
      type,
      from: msg.from ?? 0n,
      to: msg.to,
      msgType,
      action: msg.action ?? "",
      payload: payload === undefined ? EMPTY : utf8(payload),
      serverTs: BigInt(msg.server_ts),
      createdAt: createdAtMs(msg.created_at),
      e2ee: msg.e2ee ? e2eeProto(msg.e2ee) : undefined,
      inReplyTo: msg.in_reply_to ?? "",
    }),
  );
}

const READ_OPTS = { readUnknownFields: false } as const;
const utf8Strict = new TextDecoder("utf-8", { fatal: true });

function e2eeJson(e: E2ee): E2eeMeta {
  return {
    e2ee: true,
    e2ee_ver: e.e2eeVer,
    e2ee_suite: e.e2eeSuite,
    nonce: e.nonce,
    keys: e.keys.map((k) =>
      k.kid === undefined
        ? { did: k.did, wrap_alg: k.wrapAlg, ek: k.ek }
        : { did: k.did, kid: k.kid, wrap_alg: k.wrapAlg, ek: k.ek },
    ),
  };
}

/** Payload bytes → value; encrypted payloads may also arrive as bare Base64 text. */
function payloadValue(bytes: Uint8Array, encrypted: boolean): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: parseJsonBytes(bytes) };
  } catch {
    if (!encrypted) return { ok: false };
    try {
      return { ok: true, value: utf8Strict.decode(bytes) };
    } catch {
      return { ok: false };
    }
  }
}

/**
 * Protobuf → a plain object with the field names and value types of the
 * parsed JSON message (type and msg_type as strings, from/to as bigint,
 * payload parsed), so the delivery engine validates one shape. Proto3
 * defaults (empty strings, 0) are left out, as an absent JSON field would be.
 * Undefined when the bytes are not a protobuf Message with a known type.
 */
export function decodeProtoMessage(bytes: Uint8Array): Record<string, unknown> | undefined {
  let m;
  try {
    m = fromBinary(MessageSchema, bytes, READ_OPTS);
  } catch {
    return undefined;
  }
  const type = DIRECTION_NAME.get(m.type);
  if (type === undefined) return undefined;
  // from 0 is the server (null in ImMessage, "" in JSON): no user has id 0.
  const out: Record<string, unknown> = { id: m.id, type, from: m.from === 0n ? "" : m.from, to: m.to };
  if (m.payload.length > 0) {
    const p = payloadValue(m.payload, m.e2ee?.e2ee === true);
    if (!p.ok) return undefined;
    out.payload = p.value;
  }
  if (m.createdAt !== 0n) out.created_at = Number(m.createdAt);
  if (m.serverTs !== 0n) out.server_ts = Number(m.serverTs);
  if (m.action !== "") out.action = m.action;
  const msgType = MSG_TYPE_NAME.get(m.msgType);
  if (msgType) out.msg_type = msgType;
  if (m.e2ee?.e2ee) out.e2ee = e2eeJson(m.e2ee);
  if (m.inReplyTo !== "") out.in_reply_to = m.inReplyTo;
  return out;
}

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

/** The text form straight from frame payload bytes (non-UTF-8 → undefined). */
export function parseClientAckBytes(bytes: Uint8Array): ClientAck | undefined {
  if (!isClientAckPayload(bytes)) return undefined;
  try {
    return parseClientAckText(utf8Strict.decode(bytes));
  } catch {
    return undefined;
  }
}

/** Field 2 (`type`) of a protobuf Message or ClientAck, read without decoding the rest. */
function protoDirection(bytes: Uint8Array): number | undefined {
  try {
    const r = new BinaryReader(bytes);
    while (r.pos < r.len) {
      const [no, wt] = r.tag();
      if (no === 2 && wt === WireType.Varint) return r.int32();
      r.skip(wt, no);
    }
  } catch {
    // not protobuf
  }
  return undefined;
}

/** Is this protobuf a ClientAck (field 2 = CLIENT_ACK)? Cheap: no full decode. */
export function isProtoClientAck(bytes: Uint8Array): boolean {
  return protoDirection(bytes) === MsgDirection.CLIENT_ACK;
}

/** Protobuf ClientAck → ClientAck; undefined unless it is one, complete. */
export function decodeProtoClientAck(bytes: Uint8Array): ClientAck | undefined {
  if (!isProtoClientAck(bytes)) return undefined;
  let a;
  try {
    a = fromBinary(ClientAckSchema, bytes, READ_OPTS);
  } catch {
    return undefined;
  }
  const type = DIRECTION_NAME.get(a.msgDirection);
  if (type === undefined || !isChatType(type) || a.msgId === "" || a.did === "") return undefined;
  return { type, msgId: a.msgId, did: a.did };
}

/** Client side: the protobuf business acknowledgement. */
export function clientAckProto(ack: { type: ChatType; msgId: string; did: string }): Uint8Array {
  return toBinary(
    ClientAckSchema,
    create(ClientAckSchema, { type: MsgDirection.CLIENT_ACK, msgDirection: DIRECTION[ack.type], msgId: ack.msgId, did: ack.did }),
  );
}

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

/** Bare protobuf (svc-protobuf); the JSON text when the message has no protobuf form. */
export function outboundProto(out: Outbound): Encoded {
  const cached = out.encoded.pb;
  if (cached !== undefined) return cached;
  let enc: Encoded;
  try {
    enc = messageProto(out.msg);
  } catch {
    enc = outboundJson(out);
  }
  return (out.encoded.pb = enc);
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

/** svc.v2: protobuf inside a MSG frame, flags 0; the JSON text when protobuf (or the frame) cannot hold it. */
export function outboundV2Frame(out: Outbound): Encoded {
  const cached = out.encoded.v2;
  if (cached !== undefined) return cached;
  const pb = outboundProto(out);
  let enc: Encoded = pb;
  if (typeof pb !== "string") {
    try {
      enc = encodeFrame(msgFrameType(out.msg.type), pb);
    } catch {
      enc = outboundJson(out); // past 16 MiB
    }
  }
  return (out.encoded.v2 = enc);
}
