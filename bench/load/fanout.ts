/**
 * Fan-out load generator: one group of `members` sockets (member 0 also
 * publishes). The publisher keeps `window` messages in flight, a message
 * being complete when every member (itself included) has it. Measures
 * deliveries/s and per-delivery latency. Raw mode speaks to
 * bench/baselines/publish.ts; the Ibis side plugs in through `proto`.
 */
import { Histogram } from "../lib/hist.ts";
import { frame, HEADER, T } from "../lib/wire.ts";
import { emit, openAll, params, stopped, Window } from "./common.ts";

interface P {
  base: string;
  proto: "raw" | "ibis";
  members: number;
  window: number;
  size: number;
  durationMs: number;
  warmupMs: number;
  maxMessages: number;
}
const p = params<P>();
if (p.proto !== "raw") throw new Error("ibis C2G protocol not plugged in yet (bench/load/fanout.ts)");
const topic = `g${p.index}`;
const msg = frame(T.C2G, 0, 4 + Math.max(0, p.size));
const view = new DataView(msg.buffer);
const sentAt = new Float64Array(p.window);
const got = new Uint32Array(p.window);
const hist = new Histogram();
let sent = 0;
let done = 0; // messages every member has
let deliveries = 0;
let completed = 0;
const win = new Window(p.warmupMs, p.durationMs);
let sockets: WebSocket[] = [];

function publish(): void {
  const slot = sent % p.window;
  view.setUint32(HEADER, sent);
  sentAt[slot] = performance.now();
  got[slot] = 0;
  sent++;
  sockets[0]!.send(msg);
}

function onMessage(data: Uint8Array): void {
  const seq = new DataView(data.buffer, data.byteOffset).getUint32(HEADER);
  const slot = seq % p.window;
  if (win.measuring) {
    deliveries++;
    hist.record((performance.now() - sentAt[slot]!) * 1000);
  }
  if (++got[slot]! < p.members) return;
  done++;
  if (win.measuring && ++completed >= p.maxMessages && p.maxMessages > 0) win.stop();
  if (!win.stopped) publish();
}

sockets = await openAll(
  p.members,
  () => `${p.base}/?topic=${topic}`,
  () => ({}),
  (ws) => ws.addEventListener("message", (e) => onMessage(e.data as Uint8Array)),
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
