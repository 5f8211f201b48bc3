/**
 * Protobuf wire codec of `ibis.v2.Message` and `ibis.v2.ClientAck`
 * (proto/ibis/v2/message.proto), written on protobuf-es's BinaryWriter /
 * BinaryReader instead of the reflective create/toBinary/fromBinary: about
 * 4× faster, one object per decode, and the encoder can leave room for the
 * svc.v2 header so one buffer serves svc-protobuf and svc.v2. The generated
 * schema stays the reference: test/protocol/pb.test.ts checks byte equality
 * with toBinary, round trips through fromBinary and the schema's field list.
 */
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import type { ChatType, ClientAck, E2eeMeta, ImMessage } from "../model/message.ts";
import { MsgDirection, MsgType } from "../gen/ibis/v2/message_pb.ts";
import { parseJsonBytes, stringifyJson } from "./json.ts";

function invert<V extends number>(table: Record<string, V>): Map<V, string> {
  return new Map(Object.entries(table).map(([k, v]) => [v, k]));
}

export const DIRECTION: Readonly<Record<string, MsgDirection>> = {
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

export const MSG_TYPE: Readonly<Record<string, MsgType>> = {
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
export const isChatType = (v: string): v is ChatType => CHAT_TYPES.has(v);
const own = <T>(table: Readonly<Record<string, T>>, key: string): T | undefined =>
  Object.hasOwn(table, key) ? table[key] : undefined;

/** Field numbers (must match message.proto; pb.test.ts compares them with the generated schema). */
export const MESSAGE_FIELDS = {
  id: 1,
  type: 2,
  from: 3,
  to: 4,
  msg_type: 5,
  action: 6,
  payload: 7,
  server_ts: 8,
  created_at: 9,
  e2ee: 10,
  in_reply_to: 11,
} as const;
export const E2EE_FIELDS = { e2ee: 1, e2ee_ver: 2, e2ee_suite: 3, nonce: 4, keys: 5 } as const;
export const E2EE_KEY_FIELDS = { did: 1, kid: 2, wrap_alg: 3, ek: 4 } as const;
export const CLIENT_ACK_FIELDS = { type: 2, msg_direction: 12, msg_id: 13, did: 14 } as const;

const { Varint, LengthDelimited: Bytes } = WireType;
const SINT64_MIN = -(1n << 63n);
const SINT64_MAX = (1n << 63n) - 1n;
const DIGITS = /^\d+$/;

// ---- encode ----------------------------------------------------------------------

// One writer reused across calls (encoding is synchronous); dropped after a
// large message so its grown buffer is not kept for the process lifetime.
// Pure: a bundle that only decodes (the browser SDK) drops the writer.
let writer = /* @__PURE__ */ new BinaryWriter();
const WRITER_KEEP_MAX = 1024 * 1024;

function sint64(v: bigint, name: string): bigint {
  if (v < SINT64_MIN || v > SINT64_MAX) throw new RangeError(`${name} ${v} outside sint64`);
  return v;
}

/** created_at as ms: integers as they are, RFC 3339 strings converted, anything else 0 (absent). */
function createdAtMs(v: string | number | undefined): number | bigint {
  if (typeof v === "number") return Number.isFinite(v) ? Math.trunc(v) : 0;
  if (typeof v !== "string" || v === "") return 0;
  if (DIGITS.test(v)) return BigInt(v);
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? 0 : ms;
}

function writeE2ee(w: BinaryWriter, e: E2eeMeta): void {
  w.tag(MESSAGE_FIELDS.e2ee, Bytes).fork();
  if (e.e2ee) w.tag(E2EE_FIELDS.e2ee, Varint).bool(true);
  if (e.e2ee_ver) w.tag(E2EE_FIELDS.e2ee_ver, Varint).int32(e.e2ee_ver);
  if (e.e2ee_suite) w.tag(E2EE_FIELDS.e2ee_suite, Bytes).string(e.e2ee_suite);
  if (e.nonce) w.tag(E2EE_FIELDS.nonce, Bytes).string(e.nonce);
  for (const k of e.keys) {
    w.tag(E2EE_FIELDS.keys, Bytes).fork();
    if (k.did) w.tag(E2EE_KEY_FIELDS.did, Bytes).string(k.did);
    if (k.kid !== undefined) w.tag(E2EE_KEY_FIELDS.kid, Bytes).string(k.kid); // explicit presence
    if (k.wrap_alg) w.tag(E2EE_KEY_FIELDS.wrap_alg, Bytes).string(k.wrap_alg);
    if (k.ek) w.tag(E2EE_KEY_FIELDS.ek, Bytes).string(k.ek);
    w.join();
  }
  w.join();
}

/**
 * Encodes a Message, leaving `reserve` zero bytes in front (room for a frame
 * header). The payload field holds the UTF-8 of the payload's JSON text
 * (`payloadJson` when present). Throws when the message has no protobuf form:
 * a type or msg_type outside the enums, an id outside sint64, e2ee_ver outside int32.
 */
export function encodeMessagePb(msg: ImMessage, reserve = 0): Uint8Array {
  const type = own(DIRECTION, msg.type);
  if (type === undefined) throw new TypeError(`type ${msg.type} has no protobuf form`);
  const msgType = own(MSG_TYPE, msg.msg_type ?? "");
  if (msgType === undefined) throw new TypeError(`msg_type ${msg.msg_type} has no protobuf form`);
  const payload = msg.payloadJson ?? (msg.payload === undefined ? undefined : stringifyJson(msg.payload));
  const createdAt = createdAtMs(msg.created_at);

  const w = writer;
  try {
    if (reserve > 0) w.raw(new Uint8Array(reserve));
    if (msg.id) w.tag(MESSAGE_FIELDS.id, Bytes).string(msg.id);
    if (type) w.tag(MESSAGE_FIELDS.type, Varint).int32(type);
    if (msg.from) w.tag(MESSAGE_FIELDS.from, Varint).sint64(sint64(msg.from, "from"));
    if (msg.to) w.tag(MESSAGE_FIELDS.to, Varint).sint64(sint64(msg.to, "to"));
    if (msgType) w.tag(MESSAGE_FIELDS.msg_type, Varint).int32(msgType);
    if (msg.action) w.tag(MESSAGE_FIELDS.action, Bytes).string(msg.action);
    if (payload) w.tag(MESSAGE_FIELDS.payload, Bytes).string(payload); // UTF-8 length-delimited = bytes
    if (msg.server_ts) w.tag(MESSAGE_FIELDS.server_ts, Varint).int64(msg.server_ts);
    if (createdAt) w.tag(MESSAGE_FIELDS.created_at, Varint).int64(createdAt);
    if (msg.e2ee) writeE2ee(w, msg.e2ee);
    if (msg.in_reply_to) w.tag(MESSAGE_FIELDS.in_reply_to, Bytes).string(msg.in_reply_to);
    const out = w.finish();
    if (out.length > WRITER_KEEP_MAX) writer = new BinaryWriter();
    return out;
  } catch (e) {
    writer = new BinaryWriter(); // half-written state
    throw e;
  }
}

export function encodeClientAckPb(ack: { type: ChatType; msgId: string; did: string }): Uint8Array {
  const w = new BinaryWriter();
  w.tag(CLIENT_ACK_FIELDS.type, Varint).int32(MsgDirection.CLIENT_ACK);
  w.tag(CLIENT_ACK_FIELDS.msg_direction, Varint).int32(DIRECTION[ack.type]!);
  if (ack.msgId) w.tag(CLIENT_ACK_FIELDS.msg_id, Bytes).string(ack.msgId);
  if (ack.did) w.tag(CLIENT_ACK_FIELDS.did, Bytes).string(ack.did);
  return w.finish();
}

// ---- decode ----------------------------------------------------------------------

/** Thrown inside the decoders for a wire type that does not fit the field; caught at the top. */
class WireMismatch extends Error {}
const MISMATCH = new WireMismatch();
const expectWire = (got: WireType, want: WireType) => {
  if (got !== want) throw MISMATCH;
};

function readE2eeKey(r: BinaryReader, end: number): E2eeMeta["keys"][number] {
  const k: { did: string; kid?: string; wrap_alg: string; ek: string } = { did: "", wrap_alg: "", ek: "" };
  while (r.pos < end) {
    const [no, wt] = r.tag();
    if (no >= 1 && no <= 4) expectWire(wt, Bytes);
    if (no === E2EE_KEY_FIELDS.did) k.did = r.string();
    else if (no === E2EE_KEY_FIELDS.kid) k.kid = r.string();
    else if (no === E2EE_KEY_FIELDS.wrap_alg) k.wrap_alg = r.string();
    else if (no === E2EE_KEY_FIELDS.ek) k.ek = r.string();
    else r.skip(wt, no);
  }
  if (r.pos !== end) throw MISMATCH;
  return k;
}

/** E2ee as read: `e2ee` may be false on the wire (then the message is not encrypted). */
type E2eeRead = Omit<E2eeMeta, "e2ee"> & { e2ee: boolean };

/** Reads an E2ee message, merging into `into` as protobuf merges repeated embedded messages. */
function readE2ee(r: BinaryReader, end: number, into: E2eeRead | undefined): E2eeRead {
  const e = into ?? { e2ee: false, e2ee_ver: 0, e2ee_suite: "", nonce: "", keys: [] };
  while (r.pos < end) {
    const [no, wt] = r.tag();
    switch (no) {
      case E2EE_FIELDS.e2ee:
        expectWire(wt, Varint);
        e.e2ee = r.bool();
        break;
      case E2EE_FIELDS.e2ee_ver:
        expectWire(wt, Varint);
        e.e2ee_ver = r.int32();
        break;
      case E2EE_FIELDS.e2ee_suite:
        expectWire(wt, Bytes);
        e.e2ee_suite = r.string();
        break;
      case E2EE_FIELDS.nonce:
        expectWire(wt, Bytes);
        e.nonce = r.string();
        break;
      case E2EE_FIELDS.keys: {
        expectWire(wt, Bytes);
        const len = r.uint32();
        e.keys.push(readE2eeKey(r, r.pos + len));
        break;
      }
      default:
        r.skip(wt, no);
    }
  }
  if (r.pos !== end) throw MISMATCH;
  return e;
}

const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/** Payload bytes → value; an encrypted payload may also arrive as bare Base64 text. */
function payloadValue(bytes: Uint8Array, encrypted: boolean): unknown {
  try {
    return parseJsonBytes(bytes);
  } catch (e) {
    if (!encrypted) throw e;
    return utf8Strict.decode(bytes);
  }
}

/**
 * Decodes a Message into the field names and value types of the parsed JSON
 * object (type/msg_type as strings, from/to as bigint, from 0 → "" (the
 * server), payload parsed, created_at/server_ts as numbers); proto3 defaults
 * are left out like absent JSON fields. Undefined when the bytes are not a
 * Message with a known type. Never throws.
 */
export function decodeMessagePb(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    const r = new BinaryReader(bytes);
    let id = "";
    let type = 0;
    let from: bigint = 0n;
    let to: bigint = 0n;
    let msgType = 0;
    let action = "";
    let payload: Uint8Array | undefined;
    let serverTs: bigint = 0n;
    let createdAt: bigint = 0n;
    let e2ee: E2eeRead | undefined;
    let inReplyTo = "";
    while (r.pos < r.len) {
      const [no, wt] = r.tag();
      switch (no) {
        case MESSAGE_FIELDS.id:
          expectWire(wt, Bytes);
          id = r.string();
          break;
        case MESSAGE_FIELDS.type:
          expectWire(wt, Varint);
          type = r.int32();
          break;
        case MESSAGE_FIELDS.from:
          expectWire(wt, Varint);
          from = r.sint64() as bigint;
          break;
        case MESSAGE_FIELDS.to:
          expectWire(wt, Varint);
          to = r.sint64() as bigint;
          break;
        case MESSAGE_FIELDS.msg_type:
          expectWire(wt, Varint);
          msgType = r.int32();
          break;
        case MESSAGE_FIELDS.action:
          expectWire(wt, Bytes);
          action = r.string();
          break;
        case MESSAGE_FIELDS.payload:
          expectWire(wt, Bytes);
          payload = r.bytes(); // a view
          break;
        case MESSAGE_FIELDS.server_ts:
          expectWire(wt, Varint);
          serverTs = r.int64() as bigint;
          break;
        case MESSAGE_FIELDS.created_at:
          expectWire(wt, Varint);
          createdAt = r.int64() as bigint;
          break;
        case MESSAGE_FIELDS.e2ee: {
          expectWire(wt, Bytes);
          const len = r.uint32();
          e2ee = readE2ee(r, r.pos + len, e2ee);
          break;
        }
        case MESSAGE_FIELDS.in_reply_to:
          expectWire(wt, Bytes);
          inReplyTo = r.string();
          break;
        default:
          r.skip(wt, no);
      }
    }
    const typeName = DIRECTION_NAME.get(type);
    if (typeName === undefined) return undefined;
    const encrypted = e2ee?.e2ee === true;
    const out: Record<string, unknown> = { id, type: typeName, from: from === 0n ? "" : from, to };
    if (payload !== undefined && payload.length > 0) out.payload = payloadValue(payload, encrypted);
    if (createdAt !== 0n) out.created_at = Number(createdAt);
    if (serverTs !== 0n) out.server_ts = Number(serverTs);
    if (action !== "") out.action = action;
    const msgTypeName = MSG_TYPE_NAME.get(msgType);
    if (msgTypeName) out.msg_type = msgTypeName;
    if (encrypted) out.e2ee = e2ee;
    if (inReplyTo !== "") out.in_reply_to = inReplyTo;
    return out;
  } catch {
    return undefined;
  }
}

/**
 * Reads a ClientAck in one pass. undefined: field 2 is not CLIENT_ACK (not an
 * ack, e.g. a Message); null: an ack that is malformed or incomplete.
 */
export function decodeClientAckPb(bytes: Uint8Array): ClientAck | null | undefined {
  let type = 0;
  let direction = 0;
  let msgId = "";
  let did = "";
  try {
    const r = new BinaryReader(bytes);
    while (r.pos < r.len) {
      const [no, wt] = r.tag();
      switch (no) {
        case CLIENT_ACK_FIELDS.type:
          if (wt !== Varint) return undefined;
          type = r.int32();
          if (type !== MsgDirection.CLIENT_ACK) return undefined; // a Message: stop early
          break;
        case CLIENT_ACK_FIELDS.msg_direction:
          expectWire(wt, Varint);
          direction = r.int32();
          break;
        case CLIENT_ACK_FIELDS.msg_id:
          expectWire(wt, Bytes);
          msgId = r.string();
          break;
        case CLIENT_ACK_FIELDS.did:
          expectWire(wt, Bytes);
          did = r.string();
          break;
        default:
          r.skip(wt, no);
      }
    }
  } catch {
    return type === MsgDirection.CLIENT_ACK ? null : undefined;
  }
  if (type !== MsgDirection.CLIENT_ACK) return undefined;
  const chat = DIRECTION_NAME.get(direction);
  if (chat === undefined || !isChatType(chat) || msgId === "" || did === "") return null;
  return { type: chat, msgId, did };
}
