/**
 * c2c: durable C2C between pairs of connections. Phase 1 finds each server's
 * max rate (closed loop, alternating rounds); phase 2 offers 25/50/100 % of
 * that server's own max in an open loop and records latency p50…p99.9 from
 * the scheduled send time. Baseline: a bare Bun relay of the same pattern
 * (send → SERVER_ACK + delivery → CLIENT_ACK → confirm, bytes only).
 * Ibis: embedded (in-memory PGlite) and PostgreSQL.
 *
 * With --workers N > 1 the Ibis nodes run clustered (IBIS_WORKERS=N over Redis
 * Streams); CPU and RSS then count the whole process tree.
 *
 * With --metrics-compare the Ibis side is two embedded nodes, IBIS_METRICS on
 * and off, alternating (results as scenario c2c-metrics; docs/operations.md).
 *
 * With --compare-tree DIR it is two nodes of one store, this tree's and the node of
 * another checkout (the code before a change: a git worktree with node_modules),
 * alternating round by round; the paired ratio reads this tree / DIR (scenario
 * c2c-compare-tree).
 *
 * With --compare "K=V[,K=V]" it is two nodes of one store (--ibis memory or
 * postgres, default postgres): as configured, and with those variables on top,
 * alternating round by round beside the relay (results as scenario
 * c2c-compare). Their per-round ratio is the paired measure of a change: this
 * host's speed moves by up to 2× within a minute, so two whole runs compared
 * measure the host as much as the change (bench/FINDINGS.md, fifteenth section).
 *
 *   bun run bench:c2c [--pairs 50 per client] [--window 4] [--duration 2000] [--loads 25,50,100] [--size 64] [--clients 1] [--workers 1] [--metrics-compare | --compare K=V,… | --compare-tree DIR] [--smoke]
 */
import { bool, envList, num, nums, str } from "./lib/args.ts";
import { IdGenerator } from "../src/ids/tsid.ts";
import { comparedSides, friendPairs, ibisSides, routesC2c, sideName, treeSides, type ComparedSide, type FriendPairs } from "./lib/ibis.ts";
import { cpuPerMessage, LATENCY_COLUMNS, latencyCells, machineUs, measure, pairedRounds, type ClientResult, type Round } from "./lib/measure.ts";
import { freePort, runClients } from "./lib/proc.ts";
import { alternate, medianRound, ratios, type Subject } from "./lib/rounds.ts";
import { baseline, common, finish, scenarioMain, timing, type ProtoTarget } from "./lib/scenario.ts";
import { round } from "./lib/stats.ts";

const c = common();
const a = c.args;
const P = {
  pairs: num(a, "pairs", c.smoke ? 4 : 50),
  window: num(a, "window", 4),
  size: num(a, "size", 64),
  ...timing(c),
  clients: num(a, "clients", 1),
  workers: num(a, "workers", 1),
  loads: nums(a, "loads", c.smoke ? [50, 100] : [25, 50, 100]),
  rounds: c.rounds,
  metricsCompare: bool(a, "metrics-compare"),
  /** --compare: the variables of the second node ("K=V,K2=V2"). */
  compare: str(a, "compare", ""),
  /** --compare-tree: another checkout (the code before a change) whose node alternates with this tree's. */
  compareTree: str(a, "compare-tree", ""),
};

/**
 * Two nodes compared round by round (--metrics-compare, --compare, --compare-tree): each side's name, the variables it starts
 * with on top of the cluster's, and the checkout it runs from. undefined: the usual sides (--ibis).
 */
const compareEnv = envList(P.compare);
if (P.compare && !Object.keys(compareEnv).length) throw new Error(`--compare wants K=V[,K=V], not ${JSON.stringify(P.compare)}`);
// The paired ratio is the second side over the first: metrics on / off, as docs/operations.md gives it.
if ([P.metricsCompare, P.compare, P.compareTree].filter(Boolean).length > 1) throw new Error("--metrics-compare, --compare and --compare-tree: one at a time");
const compared: { scenario: string; store: "memory" | "postgres"; sides: ComparedSide[] } | undefined = P.metricsCompare
  ? { scenario: "c2c-metrics", store: "memory", sides: [["metrics off", { IBIS_METRICS: "0" }], ["metrics on", { IBIS_METRICS: "1" }]] }
  : P.compare
    ? { scenario: "c2c-compare", store: c.ibis === "memory" ? "memory" : "postgres", sides: [["as configured", {}], [P.compare, compareEnv]] }
    : P.compareTree
      ? { scenario: "c2c-compare-tree", store: c.ibis === "memory" ? "memory" : "postgres", sides: treeSides(P.compareTree) }
      : undefined;

/** Ibis targets carry their friend pairs' ids and tokens. */
type Target = ProtoTarget & { pairs?: FriendPairs };

/**
 * Send → delivery p99 (ms) of a round: each client process keeps its own
 * histogram of it, so with several clients this is the worst client's (one
 * client: exact).
 */
const deliveryP99 = (r: Round): number => worstP99(r, "deliver");

/** p99 (ms) of one of the clients' histograms, the worst client's. */
const worstP99 = (r: Round, key: "deliver" | "send_lag"): number =>
  round(Math.max(0, ...r.clients.map((c) => (c[key] as { p99_us?: number } | undefined)?.p99_us ?? 0)) / 1000, 2);

/** One round: `clients` processes, each with its own slice of pairs; rate 0 = closed loop. */
const c2cRound = (t: Target, rate: number) =>
  measure([t.server.pid], () =>
    Promise.all(
      Array.from({ length: P.clients }, (_, index) =>
        runClients<ClientResult>(
          "bench/load/c2c.ts",
          1,
          {
            base: t.server.ws,
            proto: t.proto,
            pairs: P.pairs,
            pairOffset: index * P.pairs,
            window: P.window,
            rate: rate / P.clients,
            size: P.size,
            durationMs: P.durationMs,
            warmupMs: P.warmupMs,
            maxMessages: 0,
            // A fresh TSID per generator: ids never repeat across rounds (the store dedupes by id).
            extra: t.pairs && { ...t.pairs, tsid: new IdGenerator(index).next().toString() },
          },
          P.durationMs + P.warmupMs + 30_000,
        ),
      ),
    ).then((x) => x.flat()),
  );

await scenarioMain(async (cleanup) => {
  const relay = cleanup.add(await baseline("bun-relay", "c2c-relay.ts"));
  const targets: Target[] = [{ name: "bun-relay", kind: "baseline", server: relay, proto: "raw" }];
  // ---- Ibis side: needs bench/load/proto/ibis-c2c.ts and friend pairs from bench/lib/ibis.ts.
  const cluster = (): Record<string, string> =>
    P.workers > 1
      ? { IBIS_WORKERS: String(P.workers), PORT: String(freePort()), REDIS_URL: process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379" }
      : {};
  for (const h of compared ? await comparedSides(compared.store, compared.sides, c.notes, cluster) : await ibisSides(c.ibis, ["memory", "postgres"], c.notes, cluster)) {
    cleanup.add(h);
    const routed = await routesC2c(h);
    const name = routed ? h.name : `${h.name} (transport only)`;
    if (!routed) {
      c.notes.push(
        `${name}: the node answers SERVER_ACK and CLIENT_ACK_CONFIRM without storing or routing (a node without the delivery engine); ` +
          "the receiver acknowledges each SERVER_ACK itself, so this measures the WebSocket transport only, not durable C2C.",
      );
    }
    targets.push({ name, kind: "ibis", server: h.server, proto: "ibis", pairs: await friendPairs(h, P.pairs * P.clients, !routed) });
  }

  console.error(`max rate: ${P.pairs} pairs × window ${P.window}, ${P.rounds} rounds of ${P.durationMs} ms`);
  // Two compared nodes take turns to go first (ABBA): the second of a pair inherits the first's dirty pages.
  const max = await alternate<Round>(
    targets.map((t) => ({ name: t.name, kind: t.kind, run: () => c2cRound(t, 0) })),
    P.rounds,
    c.notes,
    compared !== undefined,
  );
  const rr = ratios(max, "bun-relay", (r) => r.rate);
  const live = targets.filter((t) => max[t.name]);

  // Latency under load: each server at a share of its own max, servers alternating per level.
  const byLoad: Record<string, { load_pct: number; offered: number; round: Round }[]> = {};
  for (const pct of P.loads) {
    const subjects: Subject<Round>[] = live.map((t) => ({
      name: t.name,
      kind: t.kind,
      run: () => c2cRound(t, Math.max(1, Math.round((rr[t.name]!.median * pct) / 100))),
    }));
    console.error(`open loop at ${pct} % of each server's max`);
    const r = await alternate(subjects, 1, c.notes);
    for (const t of live.filter((t) => r[t.name])) {
      (byLoad[t.name] ??= []).push({ load_pct: pct, offered: Math.round((rr[t.name]!.median * pct) / 100), round: r[t.name]![0]! });
    }
  }

  const scenario = compared?.scenario ?? "c2c";
  finish(scenario, c, {
    notes: compared ? pairedNotes(compared, max) : undefined,
    params: P,
    raw: { max, by_load: byLoad },
    ratios: { messages_per_s: rr },
    tables: [
      {
        title: `max C2C messages/s, closed loop (${P.pairs} pairs, window ${P.window}, ${P.size} B; median of ${P.rounds} alternating rounds)`,
        columns: ["server", "messages/s", "× bun-relay", ...LATENCY_COLUMNS],
        rows: live.map((t) => [t.name, round(rr[t.name]!.median), rr[t.name]!.ratio, ...latencyCells(medianRound(max[t.name]!, (r) => r.rate))]),
      },
      cpuTable(live.map((t) => [t.name, medianRound(max[t.name]!, (r) => r.rate)])),
      ...(compared ? [comparedTable(compared, max)] : []),
      {
        title:
          "latency at a share of each server's own max (open loop, from scheduled send time to CLIENT_ACK_CONFIRM; " +
          "send→delivery from scheduled send time to the receiver's push, issue 19's measure; generator lag: how late the " +
          "generator's own sends left past their scheduled time, which every latency here includes; the kernel's writeback over " +
          "the round: the most page cache dirty at once and the most written to disk in 100 ms, a burst that a PostgreSQL " +
          "commit's WAL flush waits behind, docs/operations.md)",
        columns: [
          "server",
          "load %",
          "offered/s",
          "completed/s",
          ...LATENCY_COLUMNS,
          "send→delivery p99 ms",
          "generator lag p99 ms",
          "machine idle %",
          "of it waiting on I/O",
          "dirty page cache peak MB",
          "largest disk write in 100 ms, MB",
        ],
        rows: live.flatMap((t) =>
          (byLoad[t.name] ?? []).map((x) => [
            t.name,
            x.load_pct,
            x.offered,
            round(x.round.rate),
            ...latencyCells(x.round),
            deliveryP99(x.round),
            worstP99(x.round, "send_lag"),
            x.round.machine_idle_pct ?? "",
            x.round.machine_iowait_pct ?? "",
            x.round.machine_dirty_peak_mb ?? "",
            x.round.machine_disk_burst_mb ?? "",
          ]),
        ),
      },
    ],
    charts: [
      {
        id: `${scenario}-throughput`,
        title: "C2C completed messages/s vs offered load",
        kind: "line",
        x_label: "offered messages/s",
        y_label: "completed messages/s",
        series: live.map((t) => ({ name: t.name, points: (byLoad[t.name] ?? []).map((x) => [x.offered, round(x.round.rate)]) })),
      },
      {
        id: `${scenario}-p99`,
        title: "C2C p99 latency vs offered load",
        kind: "line",
        x_label: "offered messages/s",
        y_label: "p99 ms (send → confirm)",
        series: live.map((t) => ({ name: t.name, points: (byLoad[t.name] ?? []).map((x) => [x.offered, round(x.round.latency.p99_us / 1000, 2)]) })),
      },
    ],
  });
});

/**
 * Where a closed-loop message's CPU is, per subject (its median round): the server, PostgreSQL, the generator.
 * Every process shares the cores, so the sum bounds the rate as much as any one of them.
 */
function cpuTable(rounds: [string, Round][]) {
  return {
    title:
      "CPU per message in the closed loop, µs (median round): server and PostgreSQL's processes, like the machine's " +
      "context switches, over the whole round, warm-up included, the load generator over its measured window; the " +
      "embedded store's CPU is the node's; the machine's idle share over the round, % of all cores, and of it the share " +
      "idle while some task waited on I/O (a closed loop that leaves cores idle waits for something: commits, wake-ups)",
    columns: [
      "server", "server µs/msg", "of it in the kernel", "PostgreSQL µs/msg", "generator µs/msg", "all µs/msg", "context switches/msg (machine)",
      "server's main thread waiting for a core, % of the round", "machine idle, % of all cores", "of it waiting on I/O",
    ],
    rows: rounds.map(([name, r]) => {
      const c = cpuPerMessage(r);
      return [name, c.server_us, c.server_sys_us ?? "", c.db_us ?? "", c.client_us, machineUs(c), c.switches ?? "", r.server_wait_pct ?? "", r.machine_idle_pct ?? "", r.machine_iowait_pct ?? ""];
    }),
  };
}

/** The two compared nodes' closed-loop rounds, paired (bench/lib/measure.ts `pairedRounds`). */
function comparedTable(k: NonNullable<typeof compared>, max: Record<string, Round[]>) {
  const [la, lb] = k.sides.map(([label]) => label) as [string, string];
  return pairedRounds(max[sideName(k.store, la)] ?? [], max[sideName(k.store, lb)] ?? [], la, lb);
}

function pairedNotes(k: NonNullable<typeof compared>, max: Record<string, Round[]>): string[] {
  const t = comparedTable(k, max);
  const ratios = t.rows.slice(0, -1).map((r) => r[3] as number);
  const [la, lb] = k.sides.map(([label]) => label);
  const what =
    k.scenario === "c2c-metrics"
      ? "IBIS_METRICS=0 drops the endpoint and the event-loop monitor; the per-message increments stay in both, see docs/operations.md"
      : k.scenario === "c2c-compare-tree"
        ? `this tree's node against the node of ${P.compareTree}, same variables, each on a fresh database`
        : `the second node started with ${lb} on top of the first's variables`;
  if (!ratios.length) return [`${lb} against ${la}: no round where both ran (${what}).`];
  return [`${lb}/${la} rate ratio per round: min ${Math.min(...ratios)}, median ${t.rows.at(-1)![3]}, max ${Math.max(...ratios)} (${what}).`];
}
