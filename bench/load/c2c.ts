/**
 * C2C load generator: `pairs` pairs of sockets (a sends, b receives). Closed
 * loop with `window` messages in flight per pair, or open loop at `rate`
 * messages/s for this process (latency then counts from the scheduled send
 * time, so a stalled server cannot hide its queueing: no coordinated omission).
 * A message completes when b has its CLIENT_ACK_CONFIRM.
 */
import { Histogram } from "../lib/hist.ts";
import { emit, openAll, params, stopped, Window } from "./common.ts";
import { ibisC2c } from "./proto/ibis-c2c.ts";
import { rawC2c } from "./proto/raw-c2c.ts";

interface P {
  base: string;
  proto: "raw" | "ibis";
  pairs: number;
  /** This process's first pair number (pairs are unique across processes). */
  pairOffset: number;
  window: number;
  /** Open-loop messages/s for this process; 0 = closed loop. */
  rate: number;
  size: number;
  durationMs: number;
  warmupMs: number;
  maxMessages: number;
  extra?: unknown;
}
const p = params<P>();
const proto = (p.proto === "ibis" ? ibisC2c : rawC2c)({ base: p.base, size: p.size, extra: p.extra });
const CAP = p.rate > 0 ? 4096 : p.window; // ring slots per pair (open loop tolerates a backlog)
const hAck = new Histogram();
const hDeliver = new Histogram();
const hDone = new Histogram();
/** Open loop: how late each message left past its due time (tick granularity and timer lateness), the generator's own share of every latency. */
const hLag = new Histogram();
const times = new Float64Array(p.pairs * CAP);
const sentN = new Uint32Array(p.pairs);
const ackN = new Uint32Array(p.pairs);
const delN = new Uint32Array(p.pairs);
const doneN = new Uint32Array(p.pairs);
let completed = 0;
let skipped = 0;
let other = 0;
let closes = 0;
/** Close code → count, for closes before the end (a server that closes says why). */
const closeCodes: Record<number, number> = {};
const win = new Window(p.warmupMs, p.durationMs);
win.onOpen = () => {
  for (const h of [hAck, hDeliver, hDone, hLag]) h.reset();
  completed = 0;
};
const a: WebSocket[] = [];
const b: WebSocket[] = [];

function send(i: number, at: number): boolean {
  if (sentN[i]! - doneN[i]! >= CAP) return (skipped++, false);
  times[i * CAP + (sentN[i]! % CAP)] = at;
  if (p.rate > 0 && !win.stopped) hLag.record((performance.now() - at) * 1000);
  a[i]!.send(proto.message(p.pairOffset + i, sentN[i]!));
  sentN[i]!++;
  return true;
}

const since = (i: number, n: number) => (performance.now() - times[i * CAP + (n % CAP)]!) * 1000;

function onSender(i: number, data: Uint8Array | string): void {
  if (proto.sender(data) !== "server_ack") return void other++;
  if (!win.stopped) hAck.record(since(i, ackN[i]!));
  ackN[i]!++;
  if (proto.selfAck) b[i]!.send(proto.clientAck(data, p.pairOffset + i));
}

function onReceiver(i: number, data: Uint8Array | string): void {
  const kind = proto.receiver(data);
  if (kind === "deliver") {
    if (!win.stopped) hDeliver.record(since(i, delN[i]!));
    delN[i]!++;
    b[i]!.send(proto.clientAck(data, p.pairOffset + i));
  } else if (kind === "confirm") {
    if (!win.stopped) {
      hDone.record(since(i, doneN[i]!));
      completed++;
      if (win.measuring && p.maxMessages > 0 && completed >= p.maxMessages) win.stop();
    }
    doneN[i]!++;
    if (p.rate === 0 && !win.stopped) send(i, performance.now());
  } else other++;
}

const socketsOf = (role: "a" | "b", on: (i: number, d: Uint8Array | string) => void) =>
  openAll(
    p.pairs,
    (i) => proto.url(p.pairOffset + i, role),
    (i) => proto.options(p.pairOffset + i, role),
    (ws, i) => {
      ws.addEventListener("message", (e) => on(i, e.data as Uint8Array | string));
      ws.addEventListener("close", (e) => {
        if (win.stopped) return;
        closes++;
        closeCodes[e.code] = (closeCodes[e.code] ?? 0) + 1;
      });
    },
  );
// Receivers first, so no delivery finds its peer missing.
b.push(...(await socketsOf("b", onReceiver)));
a.push(...(await socketsOf("a", onSender)));

win.start();
let timer: Timer | undefined;
if (p.rate > 0) {
  // Open loop: every 2 ms, send what the schedule says is due, stamped with its due time. Each pair's schedule is
  // shifted by i/pairs of its period, so arrivals are spread evenly (rate × 2 ms per tick); with one phase for
  // all, every pair was due at the same instant and the server got the whole offered load as one burst per
  // period, which made the latency at 25 % load a burst's latency (bench/FINDINGS.md).
  const perPair = p.rate / p.pairs / 1000; // messages per ms per pair
  const t0 = performance.now();
  const phase = (i: number) => i / p.pairs / perPair;
  timer = setInterval(() => {
    const now = performance.now();
    for (let i = 0; i < p.pairs && !win.stopped; i++) {
      const start = t0 + phase(i);
      const due = Math.floor((now - start) * perPair);
      // A full ring (server far behind) defers the rest: they go later, still stamped with their due time.
      while (sentN[i]! < due && send(i, start + (sentN[i]! + 1) / perPair));
    }
  }, 2);
} else for (let i = 0; i < p.pairs; i++) for (let k = 0; k < p.window; k++) send(i, performance.now());

await stopped(win);
if (timer) clearInterval(timer);
for (const ws of [...a, ...b]) ws.close();
emit("result", {
  pairs: p.pairs,
  rate_offered: p.rate,
  sent: sentN.reduce((x, y) => x + y, 0),
  completed,
  skipped_full_ring: skipped,
  other_frames: other,
  unexpected_closes: closes,
  close_codes: closeCodes,
  seconds: win.seconds,
  rate: win.seconds ? completed / win.seconds : 0,
  server_ack: hAck.summary(),
  deliver: hDeliver.summary(),
  confirm: hDone.summary(),
  ...(p.rate > 0 ? { send_lag: hLag.summary() } : {}),
  hist: hDone.snapshot(),
  ...win.cpu,
});
process.exit(0);
