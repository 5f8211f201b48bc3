/**
 * svc.v2 frame-level heartbeat (spec §8): every `heartbeatInterval` one ping
 * frame with a uint16 Seq that wraps, published once to every svc.v2 socket
 * (they subscribe to one topic at open). One timer per node. The WebSocket
 * transport ping and dead-peer detection are Bun's (`idleTimeout`, `sendPings`).
 */
import type { Server } from "bun";
import { pingFrame } from "../protocol/frame.ts";

export const V2_TOPIC = "ibis.v2";

/** Seq after `seq` (uint16, wraps 65535 → 0). */
export const nextSeq = (seq: number): number => (seq + 1) & 0xffff;

export class FrameHeartbeat {
  #seq: number;
  constructor(firstSeq = 0) {
    this.#seq = firstSeq & 0xffff;
  }

  /** Sends the next ping to every svc.v2 socket of `server`; returns its Seq. */
  beat(server: Server<unknown> | undefined): number {
    const seq = this.#seq;
    this.#seq = nextSeq(seq);
    server?.publish(V2_TOPIC, pingFrame(seq));
    return seq;
  }
}
