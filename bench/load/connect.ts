/**
 * Connection-scale generator over raw TCP (node:net): Bun's WebSocket client
 * cannot pick its source address, so this one writes the upgrade itself and
 * spreads sources over 127.<a>.<b>.<c> (each address has its own ~28 k
 * ephemeral ports). One process stays under its open-file limit; the scenario
 * splits larger counts across processes.
 *
 * Phases: open `count` sockets (`concurrency` handshakes in flight), each
 * reading `pending` server frames and answering each with a pre-built ACK →
 * event `open`. SIGUSR1: drop every socket and reconnect all at once →
 * event `reconnected`. SIGUSR2 (or `holdMs` of nothing): close and report.
 */
import { connect, type Socket } from "node:net";
import { frame, T } from "../lib/wire.ts";
import { clientFrame, FrameCounter, upgradeRequest } from "../lib/wsraw.ts";
import { emit, params, selfCpu } from "./common.ts";

interface P {
  host: string;
  port: number;
  path: string;
  count: number;
  concurrency: number;
  /** Second octet of the source addresses (127.<net>.<index>.<1..250>). */
  net: number;
  pending: number;
  holdMs: number;
  /** Per-connection headers, cycled (Ibis: Authorization, X-Device-ID). */
  headers?: Record<string, string>[];
}
const p = params<P>();
const ACK = clientFrame(frame(T.ACK, 0, 8));
const requests = (p.headers ?? [{}]).map((h) => upgradeRequest(`${p.host}:${p.port}`, p.path, h));
const sockets: (Socket | undefined)[] = new Array(p.count);
let failed = 0;
let closedEarly = 0;
/** Sockets this generator closed on purpose (a drop is not an unexpected close). */
const dropped = new WeakSet<Socket>();
const source = (i: number) => `127.${p.net}.${p.index % 250}.${1 + (Math.floor(i / 20_000) + i) % 250}`;

/** Opens connection i; resolves when upgraded and its `pending` frames have arrived. */
function open(i: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: p.host, port: p.port, localAddress: source(i) });
    s.setNoDelay(true);
    let upgraded = false;
    let frames = 0;
    let head = "";
    const counter = new FrameCounter();
    const ready = () => {
      if (upgraded && frames >= p.pending) resolve(true);
    };
    s.on("connect", () => s.write(requests[i % requests.length]!));
    s.on("data", (chunk: Buffer) => {
      let from = 0;
      if (!upgraded) {
        head += chunk.toString("latin1");
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) return;
        if (!head.startsWith("HTTP/1.1 101")) {
          failed++;
          s.destroy();
          return resolve(false);
        }
        upgraded = true;
        from = chunk.length - (head.length - end - 4);
      }
      const n = counter.feed(chunk, from);
      for (let k = 0; k < n; k++) s.write(ACK);
      frames += n;
      ready();
    });
    s.on("error", () => {
      if (!upgraded) failed++;
      resolve(false);
    });
    s.on("close", () => {
      if (upgraded && !dropped.has(s)) closedEarly++;
      if (!upgraded) resolve(false);
    });
    sockets[i] = s;
    ready();
  });
}

/** Opens all with at most `concurrency` in flight; returns ms taken and how many succeeded. */
async function openAllRaw(): Promise<{ ms: number; opened: number }> {
  const t0 = performance.now();
  let next = 0;
  let opened = 0;
  const lane = async () => {
    while (next < p.count) if (await open(next++)) opened++;
  };
  await Promise.all(Array.from({ length: Math.min(p.concurrency, p.count) }, lane));
  return { ms: performance.now() - t0, opened };
}

// Signals may come any time after start: handlers go in first, phases run in order.
let reconnect: { opened: number; ms: number } | undefined;
let first: { opened: number; ms: number } | undefined;
let hold: Timer | undefined;
let wantReconnect = false;
const dropAll = () => {
  for (const s of sockets) {
    if (!s) continue;
    dropped.add(s);
    s.destroy();
  }
};
const finish = () => {
  dropAll();
  emit("result", { count: p.count, opened: first?.opened ?? 0, failed, closed_early: closedEarly, open_ms: first?.ms, reconnect, ...cpu() });
  process.exit(0);
};
const doReconnect = async () => {
  clearTimeout(hold);
  dropAll();
  reconnect = await openAllRaw();
  emit("reconnected", { ...reconnect, failed });
  hold = setTimeout(finish, p.holdMs);
};
process.on("SIGUSR2", finish);
process.on("SIGUSR1", () => {
  if (first) void doReconnect();
  else wantReconnect = true;
});

const cpu = selfCpu();
first = await openAllRaw();
emit("open", { opened: first.opened, failed, ms: first.ms, handshakes_per_s: first.opened / (first.ms / 1000) });
hold = setTimeout(finish, p.holdMs);
if (wantReconnect) void doReconnect();
