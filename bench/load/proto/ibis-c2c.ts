/**
 * Ibis's C2C over svc.v2 (spec §4.5), built on the SDK's codecs
 * (src/protocol/frame.ts header writer, src/protocol/message.ts ack text).
 * Each pair's MSG_C2C frame (a §2.8 JSON message inside) is built once; per
 * message only the digits of the id's tsid segment are rewritten in place.
 * Replies are classified from the frame type and the first two protobuf
 * fields (id 1, MsgDirection 2: the server writes them first), read in place:
 * no decode, no allocation. The CLIENT_ACK is the text form
 * `CLIENT_ACK,C2C,<msg_id>,<did>` in a MSG_C2S frame, written into one
 * scratch buffer (Bun's send copies before returning).
 *
 * `extra`: { users: [a, b][] and tokens: [a, b][] per pair (decimal ids),
 * tsid: a real TSID (decimal) this process's ids count up from, selfAck:
 * true while the transport's interim engine answers without routing — the
 * generator then acknowledges each SERVER_ACK from b itself (transport-only). }
 */
import { FRAME_HEADER_SIZE, FrameType, writeFrameHeader } from "../../../src/protocol/frame.ts";
import { clientAckText } from "../../../src/protocol/message.ts";
import type { C2cProto, ProtoParams } from "./c2c.ts";

export interface IbisC2cExtra {
  users: [string, string][];
  tokens: [string, string][];
  tsid: string;
  selfAck: boolean;
}

/** MsgDirection values (docs/protocol.md). */
const DIR = { C2C: 1, CLIENT_ACK_CONFIRM: 6, C2C_SERVER_ACK: 7 } as const;
/** Per pair, a million ids per process: far more than one round sends. */
const PER_PAIR = 1_000_000;
const LOW = 1e12;

const enc = new TextEncoder();
const device = (pair: number, role: "a" | "b") => `c2c-${role}-${pair}`;

/** MsgDirection of a protobuf Message frame; sets `idAt`/`idLen` to its id's bytes. */
let idAt = 0;
let idLen = 0;
function direction(f: Uint8Array): number {
  let i = FRAME_HEADER_SIZE;
  idLen = 0;
  if (f[i] === 0x0a) {
    idLen = f[i + 1]!; // ids are < 128 bytes: one-byte length
    idAt = i + 2;
    i = idAt + idLen;
  }
  return f[i] === 0x10 ? f[i + 1]! : 0;
}

export function ibisC2c(p: ProtoParams): C2cProto & { selfAck: boolean } {
  const x = p.extra as IbisC2cExtra;
  // tsid = hi·10^12 + lo, counted up without bigint on the hot path.
  const TSID_DIGITS = x.tsid.length; // counting up never adds a digit (far below the next power of 10)
  const hi = Number(x.tsid.slice(0, -12));
  const lo = Number(x.tsid.slice(-12));
  const frames: Uint8Array[] = [];
  const tsidAt: number[] = [];

  function build(pair: number): Uint8Array {
    const [a, b] = x.users[pair]!;
    const head = `{"id":"C2C.`;
    const json = `${head}${"0".repeat(TSID_DIGITS)}.${Date.now()}.bench","type":"C2C","from":${a},"to":${b},"payload":{"text":"${"x".repeat(p.size)}"},"msg_type":"text"}`;
    const body = enc.encode(json);
    const f = new Uint8Array(FRAME_HEADER_SIZE + body.length);
    writeFrameHeader(f, 0, FrameType.MsgC2C, 0, body.length);
    f.set(body, FRAME_HEADER_SIZE);
    tsidAt[pair] = FRAME_HEADER_SIZE + head.length;
    return (frames[pair] = f);
  }

  function writeTsid(f: Uint8Array, at: number, n: number): void {
    let l = lo + n;
    let h = hi;
    if (l >= LOW) (l -= LOW), h++;
    for (let k = at + TSID_DIGITS - 1; k >= at + TSID_DIGITS - 12; k--) (f[k] = 48 + (l % 10)), (l = Math.floor(l / 10));
    for (let k = at + TSID_DIGITS - 13; k >= at; k--) (f[k] = 48 + (h % 10)), (h = Math.floor(h / 10));
  }

  const ack = new Uint8Array(512);
  const ackPrefix = enc.encode(clientAckText({ type: "C2C", msgId: "", did: "" }).slice(0, "CLIENT_ACK,C2C,".length));
  ack.set(ackPrefix, FRAME_HEADER_SIZE);
  const dids = new Map<number, Uint8Array>();

  return {
    selfAck: x.selfAck,
    url: () => `${p.base}/ws`,
    options: (pair, role) => ({
      protocols: ["svc.v2"],
      headers: {
        Authorization: `Bearer ${x.tokens[pair]![role === "a" ? 0 : 1]}`,
        "X-Device-ID": device(pair, role),
        "X-Device-Type": "desktop",
      },
    }),
    message(pair, n) {
      const f = frames[pair] ?? build(pair);
      writeTsid(f, tsidAt[pair]!, pair * PER_PAIR + n);
      return f;
    },
    sender: (r) => (typeof r !== "string" && r[4] === FrameType.MsgS2C && direction(r) === DIR.C2C_SERVER_ACK ? "server_ack" : "other"),
    receiver(r) {
      if (typeof r === "string") return "other";
      if (r[4] === FrameType.MsgC2C) return "deliver";
      return r[4] === FrameType.MsgS2C && direction(r) === DIR.CLIENT_ACK_CONFIRM ? "confirm" : "other";
    },
    /** From a delivery (or, with selfAck, a SERVER_ACK): its id, acknowledged by b's device. */
    clientAck(d, pair) {
      const f = d as Uint8Array;
      direction(f);
      let did = dids.get(pair);
      if (!did) dids.set(pair, (did = enc.encode(`,${device(pair, "b")}`)));
      let at = FRAME_HEADER_SIZE + ackPrefix.length;
      ack.set(f.subarray(idAt, idAt + idLen), at);
      at += idLen;
      ack.set(did, at);
      at += did.length;
      writeFrameHeader(ack, 0, FrameType.MsgC2S, 0, at - FRAME_HEADER_SIZE);
      return ack.subarray(0, at);
    },
  };

}
