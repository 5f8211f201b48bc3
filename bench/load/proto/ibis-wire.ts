/**
 * svc.v2 bytes of Ibis business messages for load generators, built on the
 * SDK's codecs (src/protocol/frame.ts header writer, src/protocol/message.ts
 * ack text). A message frame (a §2.8 JSON message inside MSG_C2C/MSG_C2G) is
 * built once; per message only the digits of its id's tsid segment are
 * rewritten in place. Replies are read in place from the frame type and the
 * first two protobuf fields (id 1, MsgDirection 2: the server writes them
 * first): no decode, no allocation.
 */
import { FRAME_HEADER_SIZE, FrameType, writeFrameHeader } from "../../../src/protocol/frame.ts";
import { clientAckText } from "../../../src/protocol/message.ts";

/** MsgDirection values (docs/protocol.md). */
export const DIR = { C2C: 1, C2G: 2, CLIENT_ACK_CONFIRM: 6, C2C_SERVER_ACK: 7, C2G_SERVER_ACK: 8 } as const;
const LOW = 1e12;
const enc = new TextEncoder();

/** Where the last `direction()` call found the message id. */
export const idRef = { at: 0, len: 0 };

/** MsgDirection of a protobuf Message in an svc.v2 frame (0 when absent); sets `idRef`. */
export function direction(f: Uint8Array): number {
  let i = FRAME_HEADER_SIZE;
  idRef.len = 0;
  if (f[i] === 0x0a) {
    idRef.len = f[i + 1]!; // ids are < 128 bytes: a one-byte length
    idRef.at = i + 2;
    i = idRef.at + idRef.len;
  }
  return f[i] === 0x10 ? f[i + 1]! : 0;
}

/**
 * What a message's text is made of: "x" repeated (PostgreSQL's lz4 shrinks it ~250×: a 16 MiB payload writes
 * ~64 KB), or random Base64, which compresses as little as an E2EE message's ciphertext (its WAL is its size).
 */
export type PayloadFill = "x" | "random";

function fillText(fill: PayloadFill, size: number): string {
  if (fill === "x") return "x".repeat(size);
  const bytes = new Uint8Array(Math.ceil((size * 3) / 4) + 3);
  for (let at = 0; at < bytes.length; at += 65_536) crypto.getRandomValues(bytes.subarray(at, at + 65_536));
  return Buffer.from(bytes).toString("base64").slice(0, size); // Base64 needs no escape inside a JSON string
}

/**
 * One message frame whose id is `<type>.<tsid + n>.<ms>.bench`: `next(n)`
 * rewrites the tsid digits (tsid = a real TSID, decimal; counting up from it
 * never adds a digit) and returns the same buffer.
 */
export function messageFrame(type: "C2C" | "C2G", from: string, to: string, size: number, tsid: string, fill: PayloadFill = "x"): (n: number) => Uint8Array {
  const digits = tsid.length;
  const hi = Number(tsid.slice(0, -12));
  const lo = Number(tsid.slice(-12));
  const head = `{"id":"${type}.`;
  const json = `${head}${tsid}.${Date.now()}.bench","type":"${type}","from":${from},"to":${to},"payload":{"text":"${fillText(fill, size)}"},"msg_type":"text"}`;
  const body = enc.encode(json);
  const f = new Uint8Array(FRAME_HEADER_SIZE + body.length);
  writeFrameHeader(f, 0, type === "C2C" ? FrameType.MsgC2C : FrameType.MsgC2G, 0, body.length);
  f.set(body, FRAME_HEADER_SIZE);
  const at = FRAME_HEADER_SIZE + head.length;
  return (n) => {
    let l = lo + n;
    let h = hi;
    if (l >= LOW) (l -= LOW), h++;
    for (let k = at + digits - 1; k >= at + digits - 12; k--) (f[k] = 48 + (l % 10)), (l = Math.floor(l / 10));
    for (let k = at + digits - 13; k >= at; k--) (f[k] = 48 + (h % 10)), (h = Math.floor(h / 10));
    return f;
  };
}

/**
 * `CLIENT_ACK,<type>,<msg_id>,<did>` in a MSG_C2S frame, for the message in
 * frame `f` (its id copied from the bytes), written into one scratch buffer:
 * send it before the next call (Bun's send copies before returning).
 */
export function clientAckWriter(type: "C2C" | "C2G"): (f: Uint8Array, did: Uint8Array) => Uint8Array {
  const buf = new Uint8Array(512);
  const prefix = enc.encode(clientAckText({ type, msgId: "", did: "" }).slice(0, `CLIENT_ACK,${type},`.length));
  buf.set(prefix, FRAME_HEADER_SIZE);
  return (f, did) => {
    direction(f);
    let at = FRAME_HEADER_SIZE + prefix.length;
    buf.set(f.subarray(idRef.at, idRef.at + idRef.len), at);
    at += idRef.len;
    buf[at++] = 0x2c; // ","
    buf.set(did, at);
    at += did.length;
    writeFrameHeader(buf, 0, FrameType.MsgC2S, 0, at - FRAME_HEADER_SIZE);
    return buf.subarray(0, at);
  };
}

export const didBytes = (did: string): Uint8Array => enc.encode(did);

/** svc.v2 handshake options of one device. */
export const v2Options = (token: string, did: string) => ({
  protocols: ["svc.v2"],
  headers: { Authorization: `Bearer ${token}`, "X-Device-ID": did, "X-Device-Type": "desktop" },
});
