/**
 * connections: open K WebSocket connections (raw TCP, sources spread over
 * 127.0.0.0/8, split over processes under the open-file limit): handshakes/s
 * and server RSS per idle connection (after a full GC where the server allows
 * one), vs a raw Bun holder. Ibis: authenticated svc.v2 connections.
 *
 * --server-procs N: N raw holders on one port, and Ibis as N workers (Redis).
 * --settle MS: idle time before RSS is read, the same for every server (default 2000).
 * --no-gc: read RSS after the settle without the full GC (what a server holds when nobody forces one).
 * --compare-tree DIR: the Ibis side is two nodes of one store (--ibis memory or postgres, default postgres), the
 *   node of another checkout (the code before a change) and this tree's, alternating round by round (the first
 *   of the two taking turns); a paired table reads this tree / DIR (scenario connections-compare-tree).
 *
 *   bun run bench:connections [--count 10000] [--concurrency 128] [--server-procs 1] [--compare-tree DIR] [--smoke]
 */
import { bool, num, str } from "./lib/args.ts";
import { ConnFleet } from "./lib/conns.ts";
import { comparedSides, ibisSides, sideName, treeSides } from "./lib/ibis.ts";
import { freePort, startServer } from "./lib/proc.ts";
import { cpuMeter, rssKb, tree } from "./lib/procstat.ts";
import { alternate, medianRound, pairedTable, ratios } from "./lib/rounds.ts";
import { baseline, common, finish, scenarioMain } from "./lib/scenario.ts";
import { round, sum } from "./lib/stats.ts";

// Three rounds: the median is a warm round (the first pays one-time growth: heap, caches, JIT) on both servers alike.
const c = common(3);
const a = c.args;
const P = {
  count: num(a, "count", c.smoke ? 200 : 10_000),
  concurrency: num(a, "concurrency", 128),
  serverProcs: num(a, "server-procs", 1),
  /** Idle time after the last handshake before RSS is read (both servers alike): what idle sockets hold, not the burst's garbage. */
  settleMs: num(a, "settle", c.smoke ? 200 : 2000),
  /** Full GC before the RSS reading after the connections (off with --no-gc). */
  gcAfter: !bool(a, "no-gc"),
  rounds: c.rounds,
  /** Another checkout whose node alternates with this tree's (a code A/B inside one run). */
  compareTree: str(a, "compare-tree", ""),
};
/** --compare-tree: the two Ibis sides, the other tree first (the paired ratio reads this / other). */
const sides = P.compareTree ? treeSides(P.compareTree) : undefined;

interface ConnRound {
  opened: number;
  failed: number;
  handshakes_per_s: number;
  rss_before_kb: number;
  rss_after_kb: number;
  kb_per_conn: number;
  gc: boolean;
  closed_early: number;
  server_cpu_pct: number;
  /** The server's main thread(s) ready to run but waiting for a core while opening, % of that time (absent in older results). */
  server_wait_pct?: number;
  client_cpu_pct: number;
}

interface Target {
  name: string;
  kind: "baseline" | "ibis";
  pids: number[];
  port: number;
  path: string;
  headers?: Record<string, string>[];
  /** Full GC in every server process, when the server supports it. */
  gc?: () => Promise<void>;
}

async function connRound(t: Target): Promise<ConnRound> {
  await t.gc?.();
  const before = sum(t.pids.map(rssKb));
  const meters = t.pids.map(cpuMeter);
  const fleet = new ConnFleet({ host: "127.0.0.1", port: t.port, path: t.path, count: P.count, concurrency: P.concurrency, pending: 0, holdMs: 60_000, headers: t.headers });
  const open = await fleet.phase("open");
  const cpu = meters.map((m) => m());
  const serverCpu = sum(cpu.map((m) => m.cpu_pct));
  // Idle means settled: the server finishes its side of the last handshakes, and memory freed by the
  // full GC reaches the OS (the allocator returns pages some time after the burst).
  await Bun.sleep(P.settleMs);
  if (P.gcAfter) await t.gc?.();
  const after = sum(t.pids.map(rssKb));
  const results = await fleet.close();
  await Bun.sleep(300); // closes reach the server before the next round
  return {
    opened: open.opened,
    failed: open.failed,
    handshakes_per_s: round(open.opened / (open.ms / 1000)),
    rss_before_kb: before,
    rss_after_kb: after,
    kb_per_conn: open.opened ? round((after - before) / open.opened, 2) : 0,
    gc: P.gcAfter && Boolean(t.gc),
    closed_early: sum(results.map((r) => Number(r.closed_early ?? 0))),
    server_cpu_pct: round(serverCpu, 1),
    server_wait_pct: round(sum(cpu.map((m) => m.wait_pct)), 1),
    client_cpu_pct: round(sum(results.map((r) => Number(r.client_cpu_pct ?? 0))), 1),
  };
}

await scenarioMain(async (cleanup) => {
  const first = cleanup.add(await baseline("bun-hold", "hold.ts"));
  const pids = [first.pid];
  for (let i = 1; i < P.serverProcs; i++) {
    pids.push(cleanup.add(await startServer({ name: `bun-hold-${i}`, cmd: ["bun", "bench/baselines/hold.ts"], env: { PORT: String(first.port) } })).pid);
  }
  const gcAll = async () => {
    for (const pid of pids) process.kill(pid, "SIGUSR1");
    await Bun.sleep(300);
  };
  const targets: Target[] = [{ name: "bun-hold", kind: "baseline", pids, port: first.port, path: "/", gc: gcAll }];
  // ---- Ibis side: authenticated svc.v2 handshakes of real users (bulk-inserted on PostgreSQL, the
  // default here: 10 k signups through REST would dominate the run). RSS is read after a full GC through
  // the opt-in IBIS_BENCH_GC_SIGNAL hook, sent to every process of the node's tree. With --server-procs N > 1
  // Ibis runs N workers on one fixed port over Redis (past one process's ~20 k open files).
  const workers = (): Record<string, string> =>
    P.serverProcs > 1
      ? { IBIS_WORKERS: String(P.serverProcs), PORT: String(freePort()), REDIS_URL: process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379" }
      : {};
  const env = () => ({ IBIS_BENCH_GC_SIGNAL: "1", ...workers() });
  const store = c.ibis === "memory" ? "memory" : "postgres";
  for (const h of sides ? await comparedSides(store, sides, c.notes, env) : await ibisSides(c.ibis, ["postgres"], c.notes, env)) {
    cleanup.add(h);
    const users = await h.users(P.count);
    const headers = await Promise.all(users.map(async (u, i) => ({ ...(await h.headers(u, `conn-${i}`)), "Sec-WebSocket-Protocol": "svc.v2" })));
    const gc = async () => {
      for (const pid of tree(h.server.pid)) {
        try {
          process.kill(pid, "SIGUSR1");
        } catch {
          // a child that has already exited
        }
      }
      await Bun.sleep(300);
    };
    targets.push({ name: h.name, kind: "ibis", pids: [h.server.pid], port: h.server.port, path: "/ws", headers, gc });
  }

  console.error(`${P.count} connections per round, ${P.rounds} rounds`);
  const rounds = await alternate<ConnRound>(
    targets.map((t) => ({ name: t.name, kind: t.kind, run: () => connRound(t) })),
    P.rounds,
    c.notes,
    sides !== undefined, // the compared nodes take turns to go first
  );
  const hs = ratios(rounds, "bun-hold", (r) => r.handshakes_per_s);
  const mem = ratios(rounds, "bun-hold", (r) => r.kb_per_conn);
  const [la, lb] = (sides ?? []).map(([label]) => sideName(store, label)) as [string, string];
  const paired =
    sides &&
    pairedTable(rounds[la] ?? [], rounds[lb] ?? [], [la, lb], [["handshakes/s", (r) => r.handshakes_per_s], ["KB per conn", (r) => r.kb_per_conn]], `${lb} against ${la}, paired by round: handshakes/s and KB per idle connection`);
  finish(sides ? "connections-compare-tree" : "connections", c, {
    params: P,
    raw: rounds,
    ratios: { handshakes_per_s: hs, kb_per_conn: mem },
    tables: [
      {
        title: `${P.count} idle connections (raw TCP clients over 127.77+.x.y; median of ${P.rounds} alternating rounds)`,
        columns: ["server", "opened", "failed", "handshakes/s", "× bun-hold", "KB per conn", "× bun-hold (lower is better)", "RSS after MB", "after GC", "server CPU % (opening)", "client CPU %", "server's main thread waiting for a core % (opening)"],
        rows: targets
          .filter((t) => rounds[t.name])
          .map((t) => {
            const m = medianRound(rounds[t.name]!, (r) => r.handshakes_per_s);
            return [t.name, m.opened, m.failed, hs[t.name]!.median, hs[t.name]!.ratio, mem[t.name]!.median, mem[t.name]!.ratio, round(m.rss_after_kb / 1024, 1), m.gc ? "yes" : "no", m.server_cpu_pct, m.client_cpu_pct, m.server_wait_pct ?? ""];
          }),
      },
      ...(paired ? [paired] : []),
    ],
  });
});
