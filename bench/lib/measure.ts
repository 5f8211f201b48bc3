import { Histogram, type HistSnapshot, type Percentiles } from "./hist.ts";
import { contextSwitches, cpuMeter, cpuMsOfCommand, idleShares, machineCpu, minorFaults, rssKb, writebackMeter } from "./procstat.ts";
import { pairedTable } from "./rounds.ts";
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
  /** The kernel's part of server_cpu_pct (stime); absent in results written before it was recorded. */
  server_sys_pct?: number;
  /**
   * How long the server's main thread(s) were ready to run but waited for a core, % of the round's wall time (its
   * run delay): another process had the core. Absent in results written before it was recorded.
   */
  server_wait_pct?: number;
  server_rss_kb: number;
  /** Minor page faults of the server(s) during the round: pages of fresh memory touched. */
  server_minor_faults: number;
  /**
   * CPU % of every `postgres` process on the machine during the round (100 = one core): a PostgreSQL node's
   * database, ~0 for a baseline or the embedded store (PGlite runs inside the node and counts as its CPU).
   * Absent in results written before it was recorded.
   */
  db_cpu_pct?: number;
  /** Context switches of the whole machine per second of the round (absent in results written before it was recorded). */
  machine_ctxt_per_s?: number;
  /**
   * The machine's idle share over the round, % of all cores' time (100 = every core idle), and of it the share
   * idle while some task waited on I/O (`idleShares`). Absent in results written before they were recorded.
   */
  machine_idle_pct?: number;
  machine_iowait_pct?: number;
  /**
   * The kernel's writeback during the round (`writebackMeter`): the most page cache dirty at once, MB, and the most
   * written to the disks in 100 ms, MB. Absent in results written before they were recorded.
   */
  machine_dirty_peak_mb?: number;
  machine_disk_burst_mb?: number;
  client_cpu_pct: number;
  /** Every client's result without its histogram (the merged one is `hist`). */
  clients: Omit<ClientResult, "hist">[];
  hist: HistSnapshot;
}

/** Runs one round's clients while metering the server process(es). */
export async function measure(serverPids: number[], run: () => Promise<ClientResult[]>): Promise<Round> {
  const meters = serverPids.map(cpuMeter);
  const faults0 = sum(serverPids.map(minorFaults));
  const db0 = cpuMsOfCommand("postgres");
  const ctxt0 = contextSwitches();
  const machine0 = machineCpu();
  const writeback = writebackMeter();
  const t0 = performance.now();
  let results: ClientResult[];
  try {
    results = await run();
  } catch (e) {
    writeback(); // its timer stops with the round
    throw e;
  }
  const wb = writeback();
  const cpu = meters.map((m) => m());
  const wallMs = performance.now() - t0;
  const dbPct = ((cpuMsOfCommand("postgres") - db0) / wallMs) * 100;
  const ctxtPerS = ((contextSwitches() - ctxt0) / wallMs) * 1000;
  const idle = idleShares(machine0, machineCpu());
  const faults = sum(serverPids.map(minorFaults)) - faults0;
  const h = Histogram.from(results.flatMap((r) => (r.hist ? [r.hist] : [])));
  return {
    rate: round(sum(results.map((r) => r.rate)), 1),
    latency: h.summary(),
    server_cpu_pct: round(sum(cpu.map((c) => c.cpu_pct)), 1),
    server_sys_pct: round(sum(cpu.map((c) => c.sys_pct)), 1),
    server_wait_pct: round(sum(cpu.map((c) => c.wait_pct)), 1),
    server_rss_kb: sum(serverPids.map(rssKb)),
    server_minor_faults: faults,
    db_cpu_pct: round(dbPct, 1),
    machine_ctxt_per_s: round(ctxtPerS),
    machine_idle_pct: idle.idle_pct,
    machine_iowait_pct: idle.iowait_pct,
    machine_dirty_peak_mb: wb.dirty_peak_mb,
    machine_disk_burst_mb: wb.disk_burst_mb,
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

/**
 * CPU per message of a closed-loop round, µs: the server, PostgreSQL's processes and the load generator, each
 * its CPU % over the round (100 = one core for a second, 10⁶ µs) divided by the round's rate. Where a
 * message's cost is, from the same run as its rate (every process shares the machine's cores). Beside it the
 * machine's context switches per message, and the server's µs spent in the kernel (of server_us).
 */
export function cpuPerMessage(r: Round): {
  server_us: number;
  server_sys_us: number | null;
  db_us: number | null;
  client_us: number;
  switches: number | null;
} {
  const rate = Math.max(1, r.rate);
  const us = (pct: number) => round((pct * 10_000) / rate, 1);
  return {
    server_us: us(r.server_cpu_pct),
    server_sys_us: r.server_sys_pct === undefined ? null : us(r.server_sys_pct),
    db_us: r.db_cpu_pct === undefined ? null : us(r.db_cpu_pct),
    client_us: us(r.client_cpu_pct),
    switches: r.machine_ctxt_per_s === undefined ? null : round(r.machine_ctxt_per_s / rate, 2),
  };
}

/** The machine's CPU per message: the server's, PostgreSQL's and the generator's µs added up. */
export const machineUs = (c: ReturnType<typeof cpuPerMessage>): number => round(c.server_us + (c.db_us ?? 0) + c.client_us, 1);

/**
 * Two nodes' closed-loop rounds compared round by round (c2c --metrics-compare, --compare, --compare-tree): round i of each ran back
 * to back, so `b / a` of a round is the paired measure, and CPU µs per message (the node's, and the machine's: node,
 * PostgreSQL and generator) is less sensitive to a shared box than the rate. Rows per round, then the medians; a
 * round one side lacks is left out.
 */
export function pairedRounds(a: readonly Round[], b: readonly Round[], la: string, lb: string) {
  return pairedTable(
    a,
    b,
    [la, lb],
    [
      ["msg/s", (r) => round(r.rate)],
      ["node µs/msg", (r) => cpuPerMessage(r).server_us],
      ["all µs/msg", (r) => machineUs(cpuPerMessage(r))],
    ],
    `${lb} against ${la}, paired by round (closed loop): rate ratio, the node's and the machine's CPU per message`,
  );
}
