/**
 * Ibis's metrics (names and meaning: docs/operations.md). One set per process,
 * like a Prometheus client's default registry: the hooks in the transport and
 * delivery are one line each and cost an integer increment per event; the
 * histograms are observed per batch, never per message.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { CounterFamily, Gauge, Histogram, Registry } from "./registry.ts";

const registry = new Registry();
const PROTOCOLS = ["svc.v2", "svc-protobuf", "svc-json", "text"] as const; // index = Proto value (src/ws/negotiate.ts)

/** Open connections by sub-protocol index; a plain array so open/close is one indexed increment. */
const connections = [0, 0, 0, 0];
registry.add(new Gauge("ibis_ws_connections", "Open WebSocket connections by sub-protocol.", () => PROTOCOLS.map((p, i) => [{ protocol: p }, connections[i]!])));

const handshakes = registry.add(new CounterFamily("ibis_ws_handshakes_total", "WebSocket handshakes accepted."));
const refusals = registry.add(new CounterFamily("ibis_ws_handshake_refusals_total", "WebSocket handshakes refused, by HTTP status."));
const refusedBy = new Map<number, ReturnType<CounterFamily["child"]>>();
for (const status of [400, 401, 429, 500, 503]) refusedBy.set(status, refusals.child({ status: String(status) }));
const refusedOther = refusals.child({ status: "other" });

const messages = registry.add(new CounterFamily("ibis_messages_total", "Messages stored, by chat type."));
const byType = { C2C: messages.child({ type: "C2C" }), C2G: messages.child({ type: "C2G" }), C2S: messages.child({ type: "C2S" }), S2C: messages.child({ type: "S2C" }) };

const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export const metrics = {
  registry,
  handshakes: handshakes.child(),
  acks: registry.add(new CounterFamily("ibis_acks_total", "Client acknowledgements (CLIENT_ACK) received.")).child(),
  retries: registry.add(new CounterFamily("ibis_delivery_retries_total", "Delivery attempts made by the retry schedule (after the first push).")).child(),
  commitBatch: registry.add(new Histogram("ibis_db_commit_batch_size", "Messages per group commit.", [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096])),
  commitSeconds: registry.add(new Histogram("ibis_db_commit_seconds", "Duration of one message group commit.", SECONDS)),
  busLag: registry.add(new Histogram("ibis_bus_lag_seconds", "Age of the oldest entry in each batch read from this node's Redis Streams inbox.", SECONDS)),
  redisErrors: registry.add(new CounterFamily("ibis_redis_errors_total", "Redis connection errors.")).child(),
  dbErrors: registry.add(new CounterFamily("ibis_db_errors_total", "Failed database batch writes (messages, marks).")).child(),
  dbRewrites: registry.add(new CounterFamily("ibis_db_batch_rewrites_total", "Message and mark batches written again deduplicating after a unique violation (a resent id, an ack sent twice).")).child(),

  wsOpened(proto: number): void {
    connections[proto]!++;
    this.handshakes.inc();
  },
  wsClosed(proto: number): void {
    connections[proto]!--;
  },
  wsRefused(status: number): void {
    (refusedBy.get(status) ?? refusedOther).inc();
  },
  /** One stored message; a switch on the type, no label lookup. */
  message(type: string): void {
    switch (type) {
      case "C2C":
        return byType.C2C.inc();
      case "C2G":
        return byType.C2G.inc();
      case "C2S":
        return byType.C2S.inc();
      case "S2C":
        return byType.S2C.inc();
    }
  },
  /** One XREADGROUP batch; `firstId` is its oldest entry id (`<ms>-<seq>`). */
  busRead(firstId: Buffer | string): void {
    const s = firstId.toString();
    this.busLag.observe(Math.max(0, Date.now() - Number(s.slice(0, s.indexOf("-")))) / 1000);
  },
  /** Wraps a batch writer: batch size and duration observed, failures counted (the error goes on). */
  timed<T, R, A extends unknown[]>(write: (items: T[], ...rest: A) => Promise<R>): (items: T[], ...rest: A) => Promise<R> {
    return (items, ...rest) => {
      const t = performance.now();
      return write(items, ...rest).then(
        (r) => (this.committed(items.length, t), r),
        (e: unknown) => {
          this.dbErrors.inc();
          throw e;
        },
      );
    };
  },
  /** A group commit of `size` messages that started at `startMs` (performance.now()). */
  committed(size: number, startMs: number): void {
    this.commitBatch.observe(size);
    this.commitSeconds.observe((performance.now() - startMs) / 1000);
  },
};

// Process and event-loop gauges, read at scrape time. The delay monitor runs only while a node serves /metrics.
const eld = monitorEventLoopDelay({ resolution: 10 });
let eldUsers = 0;
registry.add(
  new Gauge("ibis_event_loop_delay_seconds", "Event-loop delay since the previous scrape (quantile 0.5, 0.99 and max).", () => {
    const out: [Record<string, string>, number][] = eldUsers
      ? [
          [{ quantile: "0.5" }, eld.percentile(50) / 1e9],
          [{ quantile: "0.99" }, eld.percentile(99) / 1e9],
          [{ quantile: "1" }, eld.max / 1e9],
        ]
      : [];
    eld.reset();
    return out;
  }),
);
registry.add(new Gauge("process_resident_memory_bytes", "Resident memory size in bytes.", () => [[{}, process.memoryUsage.rss()]]));
registry.add(
  new Gauge("process_cpu_seconds_total", "User and system CPU time spent, seconds.", () => {
    const u = process.cpuUsage();
    return [[{}, (u.user + u.system) / 1e6]];
  }, "counter"),
);
const started = Date.now() / 1000 - performance.now() / 1000;
registry.add(new Gauge("process_start_time_seconds", "Start time of the process since the Unix epoch, seconds.", () => [[{}, Math.round(started)]]));

/** A node serving /metrics turns the event-loop monitor on (and off again at stop). */
export function monitorEventLoop(): () => void {
  if (eldUsers++ === 0) eld.enable();
  return () => {
    if (--eldUsers === 0) eld.disable();
  };
}
