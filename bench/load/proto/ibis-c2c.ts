/**
 * Ibis's C2C over svc.v2 (spec §4.5), on the shared Ibis bytes
 * (./ibis-wire.ts: JSON message in MSG_C2C built once per pair, tsid digits
 * rewritten per message, replies classified in place, text CLIENT_ACK).
 *
 * `extra`: { users: [a, b][] and tokens: [a, b][] per pair (decimal ids),
 * tsid: a real TSID (decimal) this process's ids count up from, selfAck:
 * true while a node without the delivery engine answers without routing — the
 * generator then acknowledges each SERVER_ACK from b itself (transport-only). }
 */
import { FrameType } from "../../../src/protocol/frame.ts";
import type { C2cProto, ProtoParams } from "./c2c.ts";
import { clientAckWriter, didBytes, DIR, direction, messageFrame, v2Options, type PayloadFill } from "./ibis-wire.ts";

export interface IbisC2cExtra {
  users: [string, string][];
  tokens: [string, string][];
  tsid: string;
  selfAck: boolean;
  /** What the payload's text is made of (default "x"; bench/limit.ts --payload). */
  fill?: PayloadFill;
}

/** Per pair, a million ids per process: far more than one round sends. */
const PER_PAIR = 1_000_000;
const device = (pair: number, role: "a" | "b") => `c2c-${role}-${pair}`;

export function ibisC2c(p: ProtoParams): C2cProto & { selfAck: boolean } {
  const x = p.extra as IbisC2cExtra;
  const frames: ((n: number) => Uint8Array)[] = [];
  const dids: Uint8Array[] = [];
  const ack = clientAckWriter("C2C");
  return {
    selfAck: x.selfAck,
    url: () => `${p.base}/ws`,
    options: (pair, role) => v2Options(x.tokens[pair]![role === "a" ? 0 : 1], device(pair, role)),
    message(pair, n) {
      const next = (frames[pair] ??= messageFrame("C2C", x.users[pair]![0], x.users[pair]![1], p.size, x.tsid, x.fill));
      return next(pair * PER_PAIR + n);
    },
    sender: (r) => (typeof r !== "string" && r[4] === FrameType.MsgS2C && direction(r) === DIR.C2C_SERVER_ACK ? "server_ack" : "other"),
    receiver(r) {
      if (typeof r === "string") return "other";
      if (r[4] === FrameType.MsgC2C) return "deliver";
      return r[4] === FrameType.MsgS2C && direction(r) === DIR.CLIENT_ACK_CONFIRM ? "confirm" : "other";
    },
    /** For a delivery (or, with selfAck, a SERVER_ACK): its id, acknowledged by b's device. */
    clientAck: (d, pair) => ack(d as Uint8Array, (dids[pair] ??= didBytes(device(pair, "b")))),
  };
}
