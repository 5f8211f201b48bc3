/**
 * Round-trip load generator: `conns` sockets, each keeping `window` requests
 * in flight (closed loop), or one ping per `intervalMs` (idle soak). Works
 * against a raw echo (bytes come back) and Ibis's svc.v2 ping → pong (mode
 * `ping`: the reply is matched by order, as both answer in order).
 * Frames are built once; only the Seq bytes are rewritten.
 */
import { Histogram } from "../lib/hist.ts";
import { frame, getSeq, pingFrame, setSeq, T } from "../lib/wire.ts";
import { emit, openAll, params, stopped, Window } from "./common.ts";

interface P {
  url: string;
  conns: number;
  window: number;
  mode: "binary" | "text" | "ping";
  size: number;
  durationMs: number;
  warmupMs: number;
  maxMessages: number;
  intervalMs?: number;
  /** Ibis: the server also pings (heartbeat); answer those with a pong and do not count them. */
  answerPings?: boolean;
  protocols?: string[];
  /** Per-connection headers (Ibis: one Authorization per connection); client `index` takes its own slice. */
  headers?: Record<string, string>[];
  /** This process's number among the client processes (runClients). */
  index?: number;
}
const p = params<P>();
const soak = (p.intervalMs ?? 0) > 0;
const window = soak ? 1 : p.window;
const hist = new Histogram();
let sent = 0;
let received = 0;
let bytes = 0;
let errors = 0;
let unexpectedCloses = 0;
/** Close code → count, for closes before the window stopped (what a reader needs to explain them). */
const closeCodes: Record<string, number> = {};
let mismatched = 0;

const ping = pingFrame();
const pong = frame(T.PONG, 0x07, 2);
let serverPings = 0;
const bin = p.mode === "binary" ? new Uint8Array(p.size).fill(0x61) : undefined;
const text = p.mode === "text" ? "a".repeat(p.size) : undefined;
const replyBytes = p.mode === "ping" ? ping.length : p.size;

// Per connection: a ring of send times and its read/write cursors (replies come back in order).
const times = new Float64Array(p.conns * window);
const head = new Uint32Array(p.conns);
const tail = new Uint32Array(p.conns);
const win = new Window(p.warmupMs, p.durationMs);
win.onOpen = () => {
  hist.reset();
  received = bytes = 0;
};
let sockets: WebSocket[] = [];

function send(i: number): void {
  const ws = sockets[i]!;
  times[i * window + (head[i]! % window)] = performance.now();
  head[i]!++;
  sent++;
  if (p.mode === "ping") {
    setSeq(ping, (head[i]! - 1) & 0xffff);
    ws.send(ping);
  } else ws.send((bin ?? text)!);
}

function onReply(i: number, data: Uint8Array | string): void {
  if (p.answerPings && typeof data !== "string" && data[4] === T.PING) {
    pong[9] = data[9]!;
    pong[10] = data[10]!;
    sockets[i]!.send(pong);
    return void serverPings++;
  }
  if (typeof data !== "string" && p.mode === "ping") {
    if (data[4] === T.ERROR) errors++;
    else if (getSeq(data) !== (tail[i]! & 0xffff)) mismatched++;
  }
  const t = times[i * window + (tail[i]! % window)]!;
  tail[i]!++;
  if (!win.stopped) {
    received++;
    bytes += replyBytes;
    hist.record((performance.now() - t) * 1000);
    if (win.measuring && p.maxMessages > 0 && received >= p.maxMessages) win.stop();
  }
  if (!soak && !win.stopped) send(i);
}

sockets = await openAll(
  p.conns,
  () => p.url,
  // Each client process uses its own slice: two processes on one device would be a takeover (4103).
  (i) => ({ protocols: p.protocols, headers: p.headers?.[((p.index ?? 0) * p.conns + i) % p.headers.length] }),
  (ws, i) => {
    ws.addEventListener("message", (e) => onReply(i, e.data as Uint8Array | string));
    ws.addEventListener("close", (e) => {
      if (win.stopped) return;
      unexpectedCloses++;
      const code = String((e as CloseEvent).code);
      closeCodes[code] = (closeCodes[code] ?? 0) + 1;
    });
  },
);

win.start();
let timer: Timer | undefined;
if (soak) {
  // Spread the pings over the interval so the server sees a steady trickle.
  const tick = Math.max(5, Math.floor(p.intervalMs! / 20));
  let next = 0;
  timer = setInterval(() => {
    const per = Math.ceil((p.conns * tick) / p.intervalMs!);
    for (let k = 0; k < per && !win.stopped; k++, next = (next + 1) % p.conns) {
      if (head[next]! === tail[next]!) send(next);
    }
  }, tick);
} else for (let i = 0; i < p.conns; i++) for (let k = 0; k < window; k++) send(i);

await stopped(win);
if (timer) clearInterval(timer);
for (const ws of sockets) ws.close();
emit("result", {
  sent,
  received,
  seconds: win.seconds,
  rate: win.seconds ? received / win.seconds : 0,
  mb_per_s: win.seconds ? bytes / 2 ** 20 / win.seconds : 0,
  errors,
  mismatched,
  unexpected_closes: unexpectedCloses,
  close_codes: closeCodes,
  server_pings: serverPings,
  latency: hist.summary(),
  hist: hist.snapshot(),
  ...win.cpu,
});
process.exit(0);
