/**
 * heartbeat: (1) N connections sending svc.v2 pings in a closed loop:
 * round trips/s and latency, Ibis ping→pong vs a bare Bun echo (and Node `ws`
 * echo as a peer); (2) idle soak: K connections pinging every interval for T
 * seconds: server CPU % and RSS over time, unexpected closes.
 *
 *   bun run bench:heartbeat [--conns 50] [--window 4] [--duration 2000] [--soak-conns 1000] [--soak-seconds 10] [--soak-warmup-ms 2000] [--interval-ms 1000] [--smoke]
 */
import { num } from "./lib/args.ts";
import { ibisSides, type IbisHandle } from "./lib/ibis.ts";
import { LATENCY_COLUMNS, latencyCells, measure, type ClientResult, type Round } from "./lib/measure.ts";
import { runClients, type RunningServer } from "./lib/proc.ts";
import { sampler } from "./lib/procstat.ts";
import { alternate, medianRound, ratios, type Subject } from "./lib/rounds.ts";
import { baseline, common, finish, nodePeer, scenarioMain, timing } from "./lib/scenario.ts";
import { median, round } from "./lib/stats.ts";

const c = common();
const a = c.args;
const P = {
  conns: num(a, "conns", c.smoke ? 4 : 50),
  window: num(a, "window", 4),
  ...timing(c),
  clients: num(a, "clients", 1),
  soakConns: num(a, "soak-conns", c.smoke ? 20 : 1000),
  soakSeconds: num(a, "soak-seconds", c.smoke ? 2 : 10),
  soakWarmupMs: num(a, "soak-warmup-ms", c.smoke ? 0 : 2000),
  intervalMs: num(a, "interval-ms", c.smoke ? 200 : 1000),
  rounds: c.rounds,
};

/** Handshake headers per connection (Ibis: one real user per connection). */
async function ibisHeaders(h: IbisHandle, n: number): Promise<Record<string, string>[]> {
  const users = await h.users(n);
  return Promise.all(users.map((u, i) => h.headers(u, `hb-${i}`)));
}

interface Target {
  name: string;
  kind: "baseline" | "peer" | "ibis";
  server: RunningServer;
  url: string;
  protocols?: string[];
  headers?: Record<string, string>[];
  answerPings?: boolean;
}

const pingRound = (t: Target, conns: number, extra: object) =>
  measure([t.server.pid], () =>
    runClients<ClientResult>(
      "bench/load/echo.ts",
      P.clients,
      { url: t.url, conns, window: P.window, mode: "ping", size: 0, durationMs: P.durationMs, warmupMs: P.warmupMs, maxMessages: 0, protocols: t.protocols, headers: t.headers, answerPings: t.answerPings, ...extra },
      P.durationMs + P.warmupMs + 30_000,
    ),
  );

await scenarioMain(async (cleanup) => {
  const targets: Target[] = [];
  const bun = cleanup.add(await baseline("bun-echo", "echo.ts"));
  targets.push({ name: "bun-echo", kind: "baseline", server: bun, url: bun.ws });
  const node = await nodePeer(c, cleanup);
  if (node) targets.push({ name: "node-ws-echo", kind: "peer", server: node, url: node.ws });
  // ---- Ibis side: runs once /ws is served (svc.v2 pings are spec bytes, nothing else to plug in).
  // The server's own svc.v2 heartbeat runs at the soak interval, so the soak sees both directions.
  for (const h of await ibisSides(c.ibis, ["memory"], c.notes, { IBIS_HEARTBEAT_INTERVAL_MS: String(P.intervalMs) })) {
    cleanup.add(h);
    // One device per connection across every client process (no two processes share a device).
    const headers = await ibisHeaders(h, Math.max(P.conns, P.soakConns) * P.clients);
    targets.push({ name: h.name, kind: "ibis", server: h.server, url: `${h.server.ws}/ws`, protocols: ["svc.v2"], headers, answerPings: true });
  }

  console.error(`ping→pong: ${P.conns} conns × window ${P.window}, ${P.rounds} rounds of ${P.durationMs} ms`);
  const subjects: Subject<Round>[] = targets.map((t) => ({ name: t.name, kind: t.kind, run: () => pingRound(t, P.conns, {}) }));
  const rounds = await alternate(subjects, P.rounds, c.notes);
  const live = targets.filter((t) => rounds[t.name]);
  const rr = ratios(rounds, "bun-echo", (r) => r.rate);

  console.error(`idle soak: ${P.soakConns} conns, one ping per ${P.intervalMs} ms, ${P.soakSeconds} s`);
  const soak: Record<string, { round: Round; samples: ReturnType<ReturnType<typeof sampler>> }> = {};
  for (const t of live.filter((t) => t.kind !== "peer")) {
    const stop = sampler(t.server.pid, 500);
    // Steady state: the first seconds after K handshakes (Ibis: device floors, presence notices) are not idle.
    const round = await pingRound(t, P.soakConns, { intervalMs: P.intervalMs, durationMs: P.soakSeconds * 1000, warmupMs: P.soakWarmupMs });
    soak[t.name] = { round, samples: stop() };
  }

  finish("heartbeat", c, {
    params: P,
    raw: { rounds, soak },
    ratios: { round_trips_per_s: rr },
    tables: [
      {
        title: `ping→pong round trips/s (${P.conns} conns, window ${P.window}; median of ${P.rounds} alternating rounds)`,
        columns: ["server", "round trips/s", "× bun-echo", ...LATENCY_COLUMNS],
        rows: live.map((t) => {
          const m = medianRound(rounds[t.name]!, (r) => r.rate);
          return [t.name, round(rr[t.name]!.median), rr[t.name]!.ratio, ...latencyCells(m)];
        }),
      },
      {
        title: `idle soak (${P.soakConns} conns, ping every ${P.intervalMs} ms, ${P.soakSeconds} s after ${P.soakWarmupMs / 1000} s warm-up)`,
        columns: ["server", "pongs/s", "p99 ms", "server CPU % (median sample)", "RSS start MB", "RSS end MB", "unexpected closes"],
        rows: Object.entries(soak).map(([name, s]) => [
          name,
          round(s.round.rate),
          round(s.round.latency.p99_us / 1000, 2),
          median(s.samples.map((x) => x.cpu_pct)),
          round((s.samples[0]?.rss_kb ?? 0) / 1024, 1),
          round((s.samples.at(-1)?.rss_kb ?? 0) / 1024, 1),
          s.round.clients.reduce((n, x) => n + Number(x.unexpected_closes ?? 0), 0),
        ]),
      },
    ],
    charts: [
      {
        id: "heartbeat-soak-rss",
        title: `idle soak: server RSS over time (${P.soakConns} conns)`,
        kind: "line",
        x_label: "seconds",
        y_label: "RSS MB",
        series: Object.entries(soak).map(([name, s]) => ({ name, points: s.samples.map((x) => [round(x.t_ms / 1000, 1), round(x.rss_kb / 1024, 1)]) })),
      },
    ],
  });
});
