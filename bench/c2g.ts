/**
 * c2g: fan-out to groups of 10/100/1,000 members. Member 0 publishes with
 * `window` messages in flight (a message is done when every member has it);
 * deliveries/s and per-delivery latency. Baseline: bare `server.publish` to a
 * topic (the least a Bun server can do per delivery).
 *
 *   bun run bench:c2g [--sizes 10,100,1000] [--window 8] [--size 64] [--duration 2000] [--smoke]
 */
import { num, nums } from "./lib/args.ts";
import { ibisSides } from "./lib/ibis.ts";
import { LATENCY_COLUMNS, latencyCells, measure, type ClientResult, type Round } from "./lib/measure.ts";
import { runClients } from "./lib/proc.ts";
import { alternate, medianRound, ratios } from "./lib/rounds.ts";
import { baseline, common, finish, scenarioMain, timing, type ProtoTarget } from "./lib/scenario.ts";
import { round } from "./lib/stats.ts";

const c = common();
const a = c.args;
const P = {
  sizes: nums(a, "sizes", c.smoke ? [10] : [10, 100, 1000]),
  window: num(a, "window", 8),
  size: num(a, "size", 64),
  ...timing(c),
  rounds: c.rounds,
};

type Target = ProtoTarget;

const fanoutRound = (t: Target, members: number) =>
  measure([t.server.pid], () =>
    runClients<ClientResult>(
      "bench/load/fanout.ts",
      1,
      { base: t.server.ws, proto: t.proto, members, window: P.window, size: P.size, durationMs: P.durationMs, warmupMs: P.warmupMs, maxMessages: 0 },
      P.durationMs + P.warmupMs + 60_000,
    ),
  );

await scenarioMain(async (cleanup) => {
  const pub = cleanup.add(await baseline("bun-publish", "publish.ts"));
  const targets: Target[] = [{ name: "bun-publish", kind: "baseline", server: pub, proto: "raw" }];
  // ---- Ibis side: needs a C2G protocol in bench/load/fanout.ts and groups from bench/lib/ibis.ts.
  for (const h of await ibisSides(c.ibis, ["memory"], c.notes)) {
    targets.push({ name: h.name, kind: "ibis", server: cleanup.add(h).server, proto: "ibis" });
  }

  const bySize: Record<number, { rounds: Record<string, Round[]>; ratios: ReturnType<typeof ratios> }> = {};
  for (const members of P.sizes) {
    console.error(`group of ${members}: window ${P.window}, ${P.rounds} rounds of ${P.durationMs} ms`);
    const rounds = await alternate<Round>(
      targets.map((t) => ({ name: t.name, kind: t.kind, run: () => fanoutRound(t, members) })),
      P.rounds,
      c.notes,
    );
    bySize[members] = { rounds, ratios: ratios(rounds, "bun-publish", (r) => r.rate) };
  }

  finish("c2g", c, {
    params: P,
    raw: bySize,
    ratios: Object.fromEntries(Object.entries(bySize).map(([k, v]) => [k, v.ratios])),
    tables: [
      {
        title: `fan-out deliveries/s (window ${P.window}, ${P.size} B; median of ${P.rounds} alternating rounds)`,
        columns: ["members", "server", "deliveries/s", "× bun-publish", "messages/s", ...LATENCY_COLUMNS],
        rows: P.sizes.flatMap((m) =>
          targets.filter((t) => bySize[m]!.rounds[t.name]).map((t) => {
            const r = bySize[m]!.ratios[t.name]!;
            const med = medianRound(bySize[m]!.rounds[t.name]!, (x) => x.rate);
            return [m, t.name, round(r.median), r.ratio, round(Number(med.clients[0]?.messages_per_s ?? 0)), ...latencyCells(med)];
          }),
        ),
      },
    ],
  });
});
