/**
 * svc.v2 binary frame codec (spec §4.5). No I/O: the header is read straight
 * off the received bytes and the payload is handed on as a `subarray` view of
 * them; the server's decode copies a small frame's payload out instead, which
 * costs JavaScriptCore less than a view of it (`decodeUplinkFrame`). Layout and
 * check order: docs/protocol.md.
 */
import type { ChatType } from "../model/message.ts";

export const FRAME_MAGIC = 0x4942;
export const FRAME_VERSION = 2;
export const FRAME_HEADER_SIZE = 9;
export const MAX_FRAME_PAYLOAD = 16 * 1024 * 1024;

export const FrameType = {
  HeartbeatPing: 0x01,
  HeartbeatPong: 0x02,
  Ack: 0x03,
  Nack: 0x04,
  Close: 0x05,
  Error: 0x06,
  HandshakeHello: 0x10,
  HandshakeAuth: 0x11,
  HandshakeOk: 0x12,
  MsgC2C: 0x20,
  MsgC2G: 0x21,
  MsgC2S: 0x22,
  MsgS2C: 0x23,
  MsgSync: 0x24,
  MsgTyping: 0x25,
  MsgRead: 0x26,
  MsgRecall: 0x27,
  RpcReq: 0x80,
  RpcRsp: 0x81,
} as const;
export type FrameTypeValue = (typeof FrameType)[keyof typeof FrameType];

export const FrameFlag = {
  Compressed: 0x80,
  Encrypted: 0x40,
  AckRequested: 0x20,
} as const;

const ACK_DIRECTION_SHIFT = 3;
const ACK_DIRECTION_MASK = 0x18;
const PRIORITY_MASK = 0x07;
/** Heartbeat frames carry priority 7 (business frames 0). */
const HEARTBEAT_PRIORITY = 7;

/** Direction of an ACK frame, flags bits 4–3. */
export const AckDirection = { c2c: 0, c2g: 1, s2c: 2, c2s: 3 } as const;
export type AckDirectionValue = 0 | 1 | 2 | 3;
/** AckDirection value → chat type of the acknowledged message. */
export const ACK_DIRECTION_CHAT: readonly [ChatType, ChatType, ChatType, ChatType] = ["C2C", "C2G", "S2C", "C2S"];
/** Chat type → AckDirection value. */
export const CHAT_ACK_DIRECTION: Readonly<Record<ChatType, AckDirectionValue>> = { C2C: 0, C2G: 1, S2C: 2, C2S: 3 };

export type FrameErrorReason =
  | "bad_magic"
  | "unsupported_version"
  | "frame_too_large"
  | "payload_decode_failed"
  | `unsupported_frame_type:${number}`;

export interface DecodedFrame {
  ok: true;
  flags: number;
  type: number;
  /** A view into the received bytes (same buffer); from `decodeUplinkFrame`, a copy up to `SMALL_ARRAY` bytes. */
  payload: Uint8Array;
}
export interface FrameError {
  ok: false;
  reason: FrameErrorReason;
}
export type FrameDecodeResult = DecodedFrame | FrameError;

/** A 256-entry membership table of frame types, indexed by type byte. */
export type FrameTypeSet = Readonly<Uint8Array>;

function typeSet(...types: number[]): FrameTypeSet {
  const set = new Uint8Array(256);
  for (const t of types) set[t] = 1;
  return set;
}

/** Types the server dispatches on uplink (§4.5 rules 1–5); everything else is `unsupported_frame_type:N`. */
export const UPLINK_FRAME_TYPES: FrameTypeSet = typeSet(
  FrameType.HeartbeatPing,
  FrameType.HeartbeatPong,
  FrameType.Ack,
  FrameType.Nack,
  FrameType.MsgC2C,
  FrameType.MsgC2G,
  FrameType.MsgC2S,
  FrameType.MsgS2C,
);
/** Types a client accepts on downlink (heartbeats, ERROR, MSG frames). */
export const DOWNLINK_FRAME_TYPES: FrameTypeSet = typeSet(
  FrameType.HeartbeatPing,
  FrameType.HeartbeatPong,
  FrameType.Error,
  FrameType.MsgC2C,
  FrameType.MsgC2G,
  FrameType.MsgC2S,
  FrameType.MsgS2C,
);

// Error results are shared frozen objects: a flood of bad frames allocates nothing.
const fail = (reason: FrameErrorReason): FrameError => Object.freeze({ ok: false as const, reason });
const BAD_MAGIC = fail("bad_magic");
const BAD_VERSION = fail("unsupported_version");
const TOO_LARGE = fail("frame_too_large");
const DECODE_FAILED = fail("payload_decode_failed");
const UNSUPPORTED: readonly FrameError[] = Array.from({ length: 256 }, (_, n) => fail(`unsupported_frame_type:${n}`));

const MAGIC_HI = FRAME_MAGIC >> 8;
const MAGIC_LO = FRAME_MAGIC & 0xff;

/**
 * Decodes one svc.v2 frame. Checks, in order: magic, version, declared
 * PayloadLen > 16 MiB, declared length ≠ bytes that arrived (or fewer than 9
 * bytes), then type against `accept` (uplink set by default). A message
 * shorter than the header is checked field by field as far as its bytes go
 * (one byte ≠ 0x49 is already bad_magic), then gets payload_decode_failed.
 * Never throws. The payload is a view of `bytes`.
 */
export function decodeFrame(bytes: Uint8Array, accept: FrameTypeSet = UPLINK_FRAME_TYPES): FrameDecodeResult {
  return checkFrame(bytes, accept) ?? { ok: true, flags: bytes[3]!, type: bytes[4]!, payload: bytes.subarray(FRAME_HEADER_SIZE) };
}

/**
 * The server's decode of a received frame: `decodeFrame`'s checks, and the payload of a frame of at most
 * `SMALL_ARRAY` bytes handed on as a copy (below). The client SDK keeps `decodeFrame`: a browser views a small
 * array cheaply, and its bundle has a size budget.
 */
export function decodeUplinkFrame(bytes: Uint8Array, accept: FrameTypeSet = UPLINK_FRAME_TYPES): FrameDecodeResult {
  const err = checkFrame(bytes, accept);
  if (err) return err; // a bad frame is not copied: a flood of them allocates nothing
  const n = bytes.length;
  return { ok: true, flags: bytes[3]!, type: bytes[4]!, payload: n <= SMALL_ARRAY ? copyPayload(bytes, n) : bytes.subarray(FRAME_HEADER_SIZE) };
}

/** The shared error of the first of `decodeFrame`'s checks that the frame fails; undefined when it passes them all. */
function checkFrame(bytes: Uint8Array, accept: FrameTypeSet): FrameError | undefined {
  const n = bytes.length;
  if (n < FRAME_HEADER_SIZE) {
    if ((n >= 1 && bytes[0] !== MAGIC_HI) || (n >= 2 && bytes[1] !== MAGIC_LO)) return BAD_MAGIC;
    if (n >= 3 && bytes[2] !== FRAME_VERSION) return BAD_VERSION;
    return DECODE_FAILED;
  }
  if (bytes[0] !== MAGIC_HI || bytes[1] !== MAGIC_LO) return BAD_MAGIC;
  if (bytes[2] !== FRAME_VERSION) return BAD_VERSION;
  const len = bytes[5]! * 0x1000000 + ((bytes[6]! << 16) | (bytes[7]! << 8) | bytes[8]!);
  if (len > MAX_FRAME_PAYLOAD) return TOO_LARGE;
  if (len !== n - FRAME_HEADER_SIZE) return DECODE_FAILED;
  return accept[bytes[4]!] === 1 ? undefined : UNSUPPORTED[bytes[4]!]!;
}

/**
 * JavaScriptCore keeps a typed array of at most 1,000 elements (`JSArrayBufferView::fastSizeLimit`) inside the
 * collector's own space, as Bun hands over a small received message; its first view (`subarray`, `.buffer`) moves
 * its bytes into a new, separately allocated `ArrayBuffer`. That is a copy of the whole frame and an object the
 * young collections must free: ~250–350 ns against ~30–200 for this copy, and eden pauses under C2C load a third
 * shorter without it (bench/FINDINGS.md, twenty-second). Larger arrays hold their bytes apart; a view of them
 * copies nothing (~60 ns whatever the size).
 */
export const SMALL_ARRAY = 1000;

/** A small frame's payload in an array of its own (a loop up to 256 bytes; beyond, the native copy is faster). */
function copyPayload(bytes: Uint8Array, n: number): Uint8Array {
  if (n - FRAME_HEADER_SIZE > 256) return Uint8Array.prototype.slice.call(bytes, FRAME_HEADER_SIZE, n);
  const out = new Uint8Array(n - FRAME_HEADER_SIZE);
  for (let i = FRAME_HEADER_SIZE; i < n; i++) out[i - FRAME_HEADER_SIZE] = bytes[i]!;
  return out;
}

/** Writes the 9-byte header at `offset` (payload follows it). */
export function writeFrameHeader(target: Uint8Array, offset: number, type: number, flags: number, payloadLen: number): void {
  if (!Number.isInteger(payloadLen) || payloadLen < 0 || payloadLen > MAX_FRAME_PAYLOAD) {
    throw new RangeError(`frame payload length ${payloadLen} outside 0..${MAX_FRAME_PAYLOAD}`);
  }
  target[offset] = MAGIC_HI;
  target[offset + 1] = MAGIC_LO;
  target[offset + 2] = FRAME_VERSION;
  target[offset + 3] = flags;
  target[offset + 4] = type;
  target[offset + 5] = payloadLen >>> 24;
  target[offset + 6] = payloadLen >>> 16;
  target[offset + 7] = payloadLen >>> 8;
  target[offset + 8] = payloadLen;
}

/** Header + payload in one buffer. Throws RangeError past 16 MiB. */
export function encodeFrame(type: number, payload: Uint8Array, flags = 0): Uint8Array {
  const out = new Uint8Array(FRAME_HEADER_SIZE + payload.length);
  writeFrameHeader(out, 0, type, flags, payload.length);
  out.set(payload, FRAME_HEADER_SIZE);
  return out;
}

export const isCompressed = (flags: number): boolean => (flags & FrameFlag.Compressed) !== 0;
export const isEncrypted = (flags: number): boolean => (flags & FrameFlag.Encrypted) !== 0;
export const isAckRequested = (flags: number): boolean => (flags & FrameFlag.AckRequested) !== 0;
export const ackDirectionOf = (flags: number): AckDirectionValue =>
  ((flags & ACK_DIRECTION_MASK) >> ACK_DIRECTION_SHIFT) as AckDirectionValue;
export const priorityOf = (flags: number): number => flags & PRIORITY_MASK;

export interface FlagFields {
  compressed?: boolean;
  encrypted?: boolean;
  ackRequested?: boolean;
  ackDirection?: AckDirectionValue;
  priority?: number;
}

export function makeFlags(f: FlagFields): number {
  return (
    (f.compressed ? FrameFlag.Compressed : 0) |
    (f.encrypted ? FrameFlag.Encrypted : 0) |
    (f.ackRequested ? FrameFlag.AckRequested : 0) |
    (((f.ackDirection ?? 0) << ACK_DIRECTION_SHIFT) & ACK_DIRECTION_MASK) |
    ((f.priority ?? 0) & PRIORITY_MASK)
  );
}

const PING_FLAGS = makeFlags({ ackRequested: true, priority: HEARTBEAT_PRIORITY }); // 0x27, as in the byte sample
const PONG_FLAGS = makeFlags({ priority: HEARTBEAT_PRIORITY });

function seqFrame(type: number, flags: number, seq: number): Uint8Array {
  const out = new Uint8Array(FRAME_HEADER_SIZE + 2);
  writeFrameHeader(out, 0, type, flags, 2);
  out[9] = (seq >>> 8) & 0xff;
  out[10] = seq & 0xff;
  return out;
}

/** Heartbeat ping; `seq` wraps to uint16. */
export const pingFrame = (seq: number): Uint8Array => seqFrame(FrameType.HeartbeatPing, PING_FLAGS, seq);
/** Heartbeat pong echoing `seq`. */
export const pongFrame = (seq: number): Uint8Array => seqFrame(FrameType.HeartbeatPong, PONG_FLAGS, seq);

const PING_SIZE = FRAME_HEADER_SIZE + 2;

/**
 * The pong for `bytes` when they are exactly one well-formed heartbeat ping
 * (11 bytes, magic, version 2, type ping, length 2), written into `into`
 * (11 bytes, reused by the caller); undefined for anything else. The hot path
 * of the heartbeat: no decode result, no view, no allocation.
 */
export function pongForPing(bytes: Uint8Array, into: Uint8Array): Uint8Array | undefined {
  if (
    bytes.length !== PING_SIZE ||
    bytes[4] !== FrameType.HeartbeatPing ||
    bytes[0] !== MAGIC_HI ||
    bytes[1] !== MAGIC_LO ||
    bytes[2] !== FRAME_VERSION ||
    bytes[5] !== 0 ||
    bytes[6] !== 0 ||
    bytes[7] !== 0 ||
    bytes[8] !== 2
  ) {
    return undefined;
  }
  if (into[0] !== MAGIC_HI) writeFrameHeader(into, 0, FrameType.HeartbeatPong, PONG_FLAGS, 2);
  into[9] = bytes[9]!;
  into[10] = bytes[10]!;
  return into;
}

const encoder = new TextEncoder();
const errorFrames = new Map<string, Uint8Array>();
const ERROR_FRAME_CACHE_MAX = 512;

/**
 * ERROR frame with a UTF-8 reason. Frames are cached per reason (the reasons
 * are a small fixed set), so callers must not mutate the result.
 */
export function errorFrame(reason: string): Uint8Array {
  let frame = errorFrames.get(reason);
  if (!frame) {
    frame = encodeFrame(FrameType.Error, encoder.encode(reason));
    if (errorFrames.size < ERROR_FRAME_CACHE_MAX) errorFrames.set(reason, frame);
  }
  return frame;
}

const U64_MAX = (1n << 64n) - 1n;

function u64Frame(type: number, flags: number, id: bigint): Uint8Array {
  if (id < 0n || id > U64_MAX) throw new RangeError(`frame id ${id} is not a uint64`);
  const out = new Uint8Array(FRAME_HEADER_SIZE + 8);
  writeFrameHeader(out, 0, type, flags, 8);
  new DataView(out.buffer).setBigUint64(FRAME_HEADER_SIZE, id);
  return out;
}

/** Frame-level ACK of a message (uint64 tsid), direction in flags bits 4–3. */
export const ackFrame = (id: bigint, direction: AckDirectionValue): Uint8Array =>
  u64Frame(FrameType.Ack, makeFlags({ ackDirection: direction }), id);
export const nackFrame = (id: bigint): Uint8Array => u64Frame(FrameType.Nack, 0, id);

/** uint16 Seq of a heartbeat payload; undefined unless exactly 2 bytes. */
export function readSeq(payload: Uint8Array): number | undefined {
  return payload.length === 2 ? (payload[0]! << 8) | payload[1]! : undefined;
}

/** uint64 of an ACK/NACK payload; undefined unless exactly 8 bytes. */
export function readU64(payload: Uint8Array): bigint | undefined {
  if (payload.length !== 8) return undefined;
  const hi = payload[0]! * 0x1000000 + ((payload[1]! << 16) | (payload[2]! << 8) | payload[3]!);
  const lo = payload[4]! * 0x1000000 + ((payload[5]! << 16) | (payload[6]! << 8) | payload[7]!);
  return (BigInt(hi) << 32n) | BigInt(lo);
}
