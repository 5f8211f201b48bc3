import { Histogram, type HistSnapshot, type Percentiles } from "./hist.ts";
import { cpuMeter, minorFaults, rssKb } from "./procstat.ts";
import { round, sum } from "./stats.ts";

/** What every round-trip-style generator reports (bench/load/*.ts `result`). */
export interface ClientResult {
  rate: number;
  hist?: HistSnapshot;
  client_cpu_pct: number;
  client_rss_kb: number;
  [k: string]: unknown;
}

/** One round of one subject, all its client processes merged. */
export interface Round {
  rate: number;
  latency: Percentiles;
  server_cpu_pct: number;
  server_rss_kb: number;
  /** Minor page faults of the server(s) during the round: pages of fresh memory touched. */
  server_minor_faults: number;
  client_cpu_pct: number;
  /** Every client's result without its histogram (the merged one is `hist`). */
  clients: Omit<ClientResult, "hist">[];
  hist: HistSnapshot;
}

/** Runs one round's clients while metering the server process(es). */
export async function measure(serverPids: number[], run: () => Promise<ClientResult[]>): Promise<Round> {
  const meters = serverPids.map(cpuMeter);
  const faults0 = sum(serverPids.map(minorFaults));
  const results = await run();
  const cpu = meters.map((m) => m().cpu_pct);
  const faults = sum(serverPids.map(minorFaults)) - faults0;
  const h = Histogram.from(results.flatMap((r) => (r.hist ? [r.hist] : [])));
  return {
    rate: round(sum(results.map((r) => r.rate)), 1),
    latency: h.summary(),
    server_cpu_pct: round(sum(cpu), 1),
    server_rss_kb: sum(serverPids.map(rssKb)),
    server_minor_faults: faults,
    client_cpu_pct: round(sum(results.map((r) => r.client_cpu_pct)), 1),
    clients: results.map(({ hist: _h, ...rest }) => rest),
    hist: h.snapshot(),
  };
}

const ms = (us: number) => round(us / 1000, 2);

/** Table columns for a throughput + latency row. */
export const LATENCY_COLUMNS = ["p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "server CPU %", "client CPU %"];

export const latencyCells = (r: Round): (string | number)[] => [
  ms(r.latency.p50_us),
  ms(r.latency.p90_us),
  ms(r.latency.p99_us),
  ms(r.latency.p999_us),
  r.server_cpu_pct,
  r.client_cpu_pct,
];
