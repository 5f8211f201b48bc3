/**
 * Protobuf wire codec of `ibis.v2.Message` and `ibis.v2.ClientAck`
 * (proto/ibis/v2/message.proto), written by hand (Message encoder) and on
 * protobuf-es's BinaryReader instead of the reflective create/toBinary/fromBinary:
 * one object per decode, one exactly sized buffer per encode, and the encoder can
 * leave room for the svc.v2 header so one buffer serves svc-protobuf and svc.v2. The generated
 * schema stays the reference: test/protocol/pb.test.ts checks byte equality
 * with toBinary, round trips through fromBinary and the schema's field list.
 */
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { heldPayloadUtf8, type ChatType, type ClientAck, type E2eeMeta, type ImMessage } from "../model/message.ts";
import { MsgDirection, MsgType } from "../gen/ibis/v2/message_pb.ts";
import { SMALL_ARRAY } from "./frame.ts";
import { keepPayloadText, LARGE_PAYLOAD_CHARS, MAX_JSON_DEPTH, parseJson, stringifyJson, utf8Length } from "./json.ts";

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
//
// The Message encoder sizes the message first and writes it into ONE buffer of
// exactly that size (with `reserve` bytes of room in front): no writer chunks,
// no final concatenation, and a 16 MiB payload is copied once (UTF-16 → UTF-8
// straight into place). test/protocol/pb.test.ts checks it byte for byte
// against protobuf-es toBinary.

// Pure: a bundle that only decodes (the browser SDK) drops the encoder.
const encoder = /* @__PURE__ */ new TextEncoder();
/** Below this many UTF-16 units a string is measured and written by hand; above, natively. */
const SHORT_STRING = 64;

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

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * A string's UTF-8 as the encoder will write it: its length (TextEncoder's: a
 * lone surrogate becomes U+FFFD, 3 bytes), or for a long non-ASCII string its
 * bytes, encoded natively once. A long ASCII string (a large payload, usually)
 * is checked by one native regex scan and later encoded straight into place.
 */
type Utf8 = number | Uint8Array;

function utf8Of(s: string): Utf8 {
  if (s.length > SHORT_STRING) return NON_ASCII.test(s) ? encoder.encode(s) : s.length;
  return utf8Length(s);
}

const lengthOf = (u: Utf8): number => (typeof u === "number" ? u : u.length);

/** A 64-bit varint as two uint32 halves (protobuf-es writes int64/sint64 this way). */
interface U64 {
  lo: number;
  hi: number;
}
const U32 = 0x1_0000_0000;

// Splits a bigint into halves without BigInt arithmetic (each `&`, `>>` and Number() of a bigint allocated:
// 4 % of a node's CPU in a C2C run, every id of every frame). setBigUint64 takes the value modulo 2^64.
const SPLIT = new DataView(new ArrayBuffer(8));

function u64OfBigint(v: bigint): U64 {
  SPLIT.setBigUint64(0, v, true);
  return { lo: SPLIT.getUint32(0, true), hi: SPLIT.getUint32(4, true) };
}

/** int64 of a number or bigint (two's complement for negatives). */
function int64(v: number | bigint): U64 {
  if (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= Number.MAX_SAFE_INTEGER) return { lo: v % U32, hi: Math.floor(v / U32) };
  return u64OfBigint(BigInt(v));
}

/** (v << 1) ^ (v >> 63) on the two's-complement halves. */
function zigzag(v: bigint): U64 {
  const { lo, hi } = u64OfBigint(v);
  const sign = hi >> 31; // 0 or -1
  return { lo: ((lo << 1) ^ sign) >>> 0, hi: (((hi << 1) | (lo >>> 31)) ^ sign) >>> 0 };
}
/** int32 as protobuf writes it: negatives sign-extended to 10 bytes. */
const int32 = (v: number): U64 => (v >= 0 ? { lo: v, hi: 0 } : { lo: v >>> 0, hi: 0xffffffff });

function varintSize(v: U64): number {
  let { lo, hi } = v;
  let n = 1;
  while (hi !== 0 || lo > 127) {
    lo = ((lo >>> 7) | (hi << 25)) >>> 0;
    hi >>>= 7;
    n++;
  }
  return n;
}
const uintSize = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);

/** Cursor over the output buffer. */
class Out {
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    pos: number,
  ) {
    this.pos = pos;
  }
  byte(b: number): void {
    this.buf[this.pos++] = b;
  }
  uint(n: number): void {
    while (n > 127) {
      this.buf[this.pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buf[this.pos++] = n;
  }
  varint(v: U64): void {
    let { lo, hi } = v;
    while (hi !== 0 || lo > 127) {
      this.buf[this.pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    this.buf[this.pos++] = lo;
  }
  /** A length-delimited string, measured by `utf8Of`. */
  string(s: string, u: Utf8): void {
    if (typeof u !== "number") {
      this.uint(u.length);
      this.buf.set(u, this.pos);
      this.pos += u.length;
      return;
    }
    this.uint(u);
    // A buffer of at most SMALL_ARRAY bytes lives in the collector's space, and a view of it would move it into an
    // ArrayBuffer of its own (frame.ts): there an ASCII string is written by hand, any other copied in whole.
    const small = this.buf.length <= SMALL_ARRAY;
    if (u === s.length && (u <= SHORT_STRING || small)) {
      // ASCII (UTF-8 length = UTF-16 length only when every unit is below 0x80)
      for (let i = 0; i < u; i++) this.buf[this.pos++] = s.charCodeAt(i);
      return;
    }
    if (small) this.buf.set(encoder.encode(s), this.pos);
    else encoder.encodeInto(s, this.buf.subarray(this.pos, this.pos + u));
    this.pos += u;
  }
}

const tagSize = (no: number) => (no < 16 ? 1 : 2);
const bytesField = (no: number, len: number) => tagSize(no) + uintSize(len) + len;
const KEY = (no: number, wire: WireType) => (no << 3) | wire;

interface E2eeSized {
  readonly ver: U64 | undefined;
  readonly suite: Utf8 | undefined;
  readonly nonce: Utf8 | undefined;
  readonly keys: { did?: Utf8; kid?: Utf8; wrap?: Utf8; ek?: Utf8; size: number }[];
  readonly size: number;
}

function sizeE2ee(e: E2eeMeta): E2eeSized {
  const ver = e.e2ee_ver ? int32(e.e2ee_ver) : undefined;
  const suite = e.e2ee_suite ? utf8Of(e.e2ee_suite) : undefined;
  const nonce = e.nonce ? utf8Of(e.nonce) : undefined;
  let size = (e.e2ee ? 2 : 0) + (ver ? 1 + varintSize(ver) : 0) + (suite !== undefined ? bytesField(3, lengthOf(suite)) : 0) + (nonce !== undefined ? bytesField(4, lengthOf(nonce)) : 0);
  const keys = e.keys.map((k) => {
    const did = k.did ? utf8Of(k.did) : undefined;
    const kid = k.kid !== undefined ? utf8Of(k.kid) : undefined; // explicit presence
    const wrap = k.wrap_alg ? utf8Of(k.wrap_alg) : undefined;
    const ek = k.ek ? utf8Of(k.ek) : undefined;
    const inner = (did !== undefined ? bytesField(1, lengthOf(did)) : 0) + (kid !== undefined ? bytesField(2, lengthOf(kid)) : 0) + (wrap !== undefined ? bytesField(3, lengthOf(wrap)) : 0) + (ek !== undefined ? bytesField(4, lengthOf(ek)) : 0);
    size += bytesField(5, inner);
    return { did, kid, wrap, ek, size: inner };
  });
  return { ver, suite, nonce, keys, size };
}

function writeE2ee(o: Out, e: E2eeMeta, z: E2eeSized): void {
  o.byte(KEY(MESSAGE_FIELDS.e2ee, Bytes));
  o.uint(z.size);
  if (e.e2ee) o.byte(KEY(E2EE_FIELDS.e2ee, Varint)), o.byte(1);
  if (z.ver) o.byte(KEY(E2EE_FIELDS.e2ee_ver, Varint)), o.varint(z.ver);
  if (z.suite !== undefined) o.byte(KEY(E2EE_FIELDS.e2ee_suite, Bytes)), o.string(e.e2ee_suite, z.suite);
  if (z.nonce !== undefined) o.byte(KEY(E2EE_FIELDS.nonce, Bytes)), o.string(e.nonce, z.nonce);
  e.keys.forEach((k, i) => {
    const s = z.keys[i]!;
    o.byte(KEY(E2EE_FIELDS.keys, Bytes));
    o.uint(s.size);
    if (s.did !== undefined) o.byte(KEY(E2EE_KEY_FIELDS.did, Bytes)), o.string(k.did, s.did);
    if (s.kid !== undefined) o.byte(KEY(E2EE_KEY_FIELDS.kid, Bytes)), o.string(k.kid!, s.kid);
    if (s.wrap !== undefined) o.byte(KEY(E2EE_KEY_FIELDS.wrap_alg, Bytes)), o.string(k.wrap_alg, s.wrap);
    if (s.ek !== undefined) o.byte(KEY(E2EE_KEY_FIELDS.ek, Bytes)), o.string(k.ek, s.ek);
  });
}

/**
 * Encodes a Message, leaving `reserve` bytes in front (room for a frame
 * header). The payload field holds the UTF-8 of the payload's JSON text
 * (`payloadJson` when present, copied from `payloadUtf8` when held). Throws when the message has no protobuf form:
 * a type or msg_type outside the enums, an id outside sint64, e2ee_ver outside int32.
 * `alloc` gives the buffer to write into (at least the size asked for; the answer is a view of exactly the
 * message): a large push encodes into one buffer kept for that (src/protocol/message.ts `largeFrame`).
 */
export function encodeMessagePb(msg: ImMessage, reserve = 0, alloc: (size: number) => Uint8Array = (n) => new Uint8Array(n)): Uint8Array {
  const type = own(DIRECTION, msg.type);
  if (type === undefined) throw new TypeError(`type ${msg.type} has no protobuf form`);
  const msgType = own(MSG_TYPE, msg.msg_type ?? "");
  if (msgType === undefined) throw new TypeError(`msg_type ${msg.msg_type} has no protobuf form`);
  const e2ee = msg.e2ee;
  if (e2ee && e2ee.e2ee_ver && (!Number.isInteger(e2ee.e2ee_ver) || e2ee.e2ee_ver < -(2 ** 31) || e2ee.e2ee_ver > 2 ** 31 - 1)) {
    throw new RangeError(`e2ee_ver ${e2ee.e2ee_ver} outside int32`);
  }
  // A payload held as bytes (as it arrived) is copied into place: its text is neither read nor measured.
  const held = heldPayloadUtf8(msg);
  const payload = held ? "" : (msg.payloadJson ?? (msg.payload === undefined ? undefined : stringifyJson(msg.payload)));
  const createdAt = createdAtMs(msg.created_at);

  // UTF-8 and varint sizes (undefined: field absent), in field order.
  const id = msg.id ? utf8Of(msg.id) : undefined;
  const from = msg.from ? zigzag(sint64(msg.from, "from")) : undefined;
  const to = msg.to ? zigzag(sint64(msg.to, "to")) : undefined;
  const action = msg.action ? utf8Of(msg.action) : undefined;
  const body = held ?? (payload ? utf8Of(payload) : undefined);
  const serverTs = msg.server_ts ? int64(msg.server_ts) : undefined;
  const created = createdAt ? int64(createdAt) : undefined;
  const z = e2ee ? sizeE2ee(e2ee) : undefined;
  const reply = msg.in_reply_to ? utf8Of(msg.in_reply_to) : undefined;
  const size =
    (id !== undefined ? bytesField(1, lengthOf(id)) : 0) +
    (type ? 1 + uintSize(type) : 0) +
    (from ? 1 + varintSize(from) : 0) +
    (to ? 1 + varintSize(to) : 0) +
    (msgType ? 1 + uintSize(msgType) : 0) +
    (action !== undefined ? bytesField(6, lengthOf(action)) : 0) +
    (body !== undefined ? bytesField(7, lengthOf(body)) : 0) +
    (serverTs ? 1 + varintSize(serverTs) : 0) +
    (created ? 1 + varintSize(created) : 0) +
    (z ? bytesField(10, z.size) : 0) +
    (reply !== undefined ? bytesField(11, lengthOf(reply)) : 0);

  const total = reserve + size;
  const into = alloc(total);
  const o = new Out(into.length === total ? into : into.subarray(0, total), reserve);
  if (id !== undefined) o.byte(KEY(MESSAGE_FIELDS.id, Bytes)), o.string(msg.id, id);
  if (type) o.byte(KEY(MESSAGE_FIELDS.type, Varint)), o.uint(type);
  if (from) o.byte(KEY(MESSAGE_FIELDS.from, Varint)), o.varint(from);
  if (to) o.byte(KEY(MESSAGE_FIELDS.to, Varint)), o.varint(to);
  if (msgType) o.byte(KEY(MESSAGE_FIELDS.msg_type, Varint)), o.uint(msgType);
  if (action !== undefined) o.byte(KEY(MESSAGE_FIELDS.action, Bytes)), o.string(msg.action!, action);
  if (body !== undefined) o.byte(KEY(MESSAGE_FIELDS.payload, Bytes)), o.string(payload!, body); // UTF-8 length-delimited = bytes
  if (serverTs) o.byte(KEY(MESSAGE_FIELDS.server_ts, Varint)), o.varint(serverTs);
  if (created) o.byte(KEY(MESSAGE_FIELDS.created_at, Varint)), o.varint(created);
  if (z) writeE2ee(o, e2ee!, z);
  if (reply !== undefined) o.byte(KEY(MESSAGE_FIELDS.in_reply_to, Bytes)), o.string(msg.in_reply_to!, reply);
  return o.buf;
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

/** The bytes `utf8Strict` decodes: it drops one leading byte order mark, so the kept bytes must too. */
const afterBom = (b: Uint8Array): Uint8Array => (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? b.subarray(3) : b);

/** Payload bytes → value and its JSON text; an encrypted payload may also arrive as bare Base64 text (no JSON text). */
function payloadValue(bytes: Uint8Array, encrypted: boolean): { value: unknown; json?: string } {
  const text = utf8Strict.decode(bytes);
  try {
    return { value: parseJson(text, MAX_JSON_DEPTH), json: text };
  } catch (e) {
    if (!encrypted) throw e;
    return { value: text };
  }
}

/**
 * How the server reads a large plain payload field (JSON bytes) without
 * making its text (json-sharing.ts `readLargePayload`, which the SDK does not
 * bundle): sets `out.payload` and keeps the bytes as it arrived
 * (`keepPayloadText` / `keepPayloadBytes`). Throws when the bytes are not JSON.
 */
export type LargePayloadRead = (out: Record<string, unknown>, utf8: Uint8Array) => void;

/**
 * Decodes a Message into the field names and value types of the parsed JSON
 * object (type/msg_type as strings, from/to as bigint, from 0 → "" (the
 * server), payload parsed, created_at/server_ts as numbers); proto3 defaults
 * are left out like absent JSON fields. Undefined when the bytes are not a
 * Message with a known type. Never throws. With `readLarge` (the server), a
 * large plain payload is read from its bytes.
 */
export function decodeMessagePb(bytes: Uint8Array, readLarge?: LargePayloadRead): Record<string, unknown> | undefined {
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
    if (payload !== undefined && payload.length > 0) {
      const utf8 = afterBom(payload);
      // Not JSON: thrown either way, so undecodable.
      if (readLarge && !encrypted && utf8.length >= LARGE_PAYLOAD_CHARS) readLarge(out, utf8);
      else {
        const p = payloadValue(payload, encrypted);
        out.payload = p.value;
        keepPayloadText(out, p.json, utf8);
      }
    }
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
