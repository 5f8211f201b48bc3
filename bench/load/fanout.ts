/**
 * Fan-out load generator: one group of `members` sockets (member 0 also
 * publishes). The publisher keeps `window` messages in flight, a message
 * being complete when every member (itself included) has it. Measures
 * deliveries/s and per-delivery latency. Raw mode speaks to
 * bench/baselines/publish.ts (the member's frame carries its sequence number).
 * Relay mode speaks to bench/baselines/c2g-relay.ts: the publisher's
 * SERVER_ACK counts as its own delivery, every other member answers its
 * MSG_C2G with an ACK frame (and gets a confirm), as in Ibis mode.
 * Ibis mode: member 0 (the group owner) sends MSG_C2G frames (./proto/ibis-wire.ts);
 * its C2G_SERVER_ACK counts as its own delivery, every other member gets a
 * MSG_C2G and answers it with a text CLIENT_ACK. Ibis delivers in order per
 * socket, so a member's k-th delivery is message k: matched by position.
 */
import { FrameType } from "../../src/protocol/frame.ts";
import { Histogram } from "../lib/hist.ts";
import { frame, HEADER, T } from "../lib/wire.ts";
import { emit, openAll, params, stopped, Window, type OpenOptions } from "./common.ts";
import { clientAckWriter, didBytes, DIR, direction, messageFrame, v2Options } from "./proto/ibis-wire.ts";

interface P {
  base: string;
  proto: "raw" | "relay" | "ibis";
  members: number;
  window: number;
  size: number;
  durationMs: number;
  warmupMs: number;
  maxMessages: number;
  /** Ibis: member ids (0 = owner) and tokens (decimal), the group id, a TSID to count ids up from. */
  extra?: { users: string[]; tokens: string[]; gid: string; tsid: string };
}
const p = params<P>();
const ibis = p.proto === "ibis" ? p.extra! : undefined;
const topic = `g${p.index}`;
const msg = frame(T.C2G, 0, 8 + Math.max(0, p.size));
const view = new DataView(msg.buffer);
const ibisMsg = ibis && messageFrame("C2G", ibis.users[0]!, ibis.gid, p.size, ibis.tsid);
const ack = clientAckWriter("C2G");
const dids = ibis ? ibis.users.map((_, j) => didBytes(`c2g-${j}`)) : [];
const received = new Uint32Array(p.members);
/** Relay: one ACK frame per member, its id rewritten per delivery (send copies). */
const relayAcks = p.proto === "relay" ? Array.from({ length: p.members }, () => frame(T.ACK, 0, 8)) : [];
const sentAt = new Float64Array(p.window);
const got = new Uint32Array(p.window);
const hist = new Histogram();
let sent = 0;
let done = 0; // messages every member has
let deliveries = 0;
let completed = 0;
const win = new Window(p.warmupMs, p.durationMs);
win.onOpen = () => {
  hist.reset();
  deliveries = completed = 0;
};
let sockets: WebSocket[] = [];

function publish(): void {
  const slot = sent % p.window;
  view.setUint32(HEADER, sent);
  sentAt[slot] = performance.now();
  got[slot] = 0;
  sent++;
  sockets[0]!.send(ibisMsg ? ibisMsg(sent) : msg);
}

/** Ibis: the message number this frame completes for member j, or -1 (not a delivery). */
function ibisSeq(j: number, data: Uint8Array): number {
  if (j === 0) {
    if (data[4] !== FrameType.MsgS2C || direction(data) !== DIR.C2G_SERVER_ACK) return -1;
  } else {
    if (data[4] !== FrameType.MsgC2G) return -1;
    sockets[j]!.send(ack(data, dids[j]!));
  }
  return received[j]!++;
}

/** Relay: the message number this frame completes for member j, or -1 (a confirm). */
function relaySeq(j: number, data: Uint8Array): number {
  if (j === 0 ? data[4] !== T.S2C : data[4] !== T.C2G) return -1;
  if (j > 0) {
    const a = relayAcks[j]!;
    a.set(data.subarray(HEADER, HEADER + 8), HEADER);
    sockets[j]!.send(a);
  }
  return new DataView(data.buffer, data.byteOffset).getUint32(HEADER);
}

function onMessage(j: number, data: Uint8Array): void {
  const seq = ibis ? ibisSeq(j, data) : p.proto === "relay" ? relaySeq(j, data) : new DataView(data.buffer, data.byteOffset).getUint32(HEADER);
  if (seq < 0) return;
  const slot = seq % p.window;
  if (!win.stopped) {
    deliveries++;
    hist.record((performance.now() - sentAt[slot]!) * 1000);
  }
  if (++got[slot]! < p.members) return;
  done++;
  if (!win.stopped) completed++;
  if (win.measuring && p.maxMessages > 0 && completed >= p.maxMessages) win.stop();
  if (!win.stopped) publish();
}

sockets = await openAll(
  p.members,
  () => (ibis ? `${p.base}/ws` : `${p.base}/?topic=${topic}`),
  (j): OpenOptions => (ibis ? v2Options(ibis.tokens[j]!, `c2g-${j}`) : {}),
  (ws, j) => ws.addEventListener("message", (e) => onMessage(j, e.data as Uint8Array)),
);
win.start();
for (let k = 0; k < p.window; k++) publish();
await stopped(win);
for (const ws of sockets) ws.close();
emit("result", {
  members: p.members,
  published: sent,
  completed,
  deliveries,
  seconds: win.seconds,
  rate: win.seconds ? deliveries / win.seconds : 0,
  messages_per_s: win.seconds ? completed / win.seconds : 0,
  latency: hist.summary(),
  hist: hist.snapshot(),
  ...win.cpu,
});
process.exit(0);
