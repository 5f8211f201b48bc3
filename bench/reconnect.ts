/**
 * reconnect: K clients drop and reconnect at once with P pending messages
 * each: time until every client has reconnected, pulled its P messages and
 * acknowledged each. Baseline: a raw Bun holder that pushes P frames on open.
 *
 *   bun run bench:reconnect [--clients 1000] [--pending 10] [--concurrency 256] [--smoke]
 */
import { num } from "./lib/args.ts";
import { ConnFleet } from "./lib/conns.ts";
import { ibisSides } from "./lib/ibis.ts";
import { alternate, medianRound, ratios } from "./lib/rounds.ts";
import { baseline, common, finish, scenarioMain } from "./lib/scenario.ts";
import { round } from "./lib/stats.ts";

const c = common();
const a = c.args;
const P = {
  clients: num(a, "clients", c.smoke ? 50 : 1000),
  pending: num(a, "pending", c.smoke ? 2 : 10),
  concurrency: num(a, "concurrency", 256),
  rounds: c.rounds,
};

interface ReRound {
  reconnected: number;
  failed: number;
  ms_to_all_acked: number;
  clients_per_s: number;
}

await scenarioMain(async (cleanup) => {
  const hold = cleanup.add(await baseline("bun-hold", "hold.ts"));
  const subjects = [
    {
      name: "bun-hold",
      kind: "baseline" as const,
      async run(): Promise<ReRound> {
        const fleet = new ConnFleet({ host: "127.0.0.1", port: hold.port, path: `/?pending=${P.pending}`, count: P.clients, concurrency: P.concurrency, pending: P.pending, holdMs: 60_000 });
        await fleet.phase("open");
        fleet.reconnect();
        const r = await fleet.phase("reconnected");
        await fleet.close();
        await Bun.sleep(200);
        return { reconnected: r.opened, failed: r.failed, ms_to_all_acked: round(r.ms, 1), clients_per_s: round(r.opened / (r.ms / 1000)) };
      },
    },
  ];
  // ---- Ibis side (plug-in): provision K users and a sender (bench/lib/ibis.ts), have the sender
  // send P C2C messages to each while it is offline, then run the same fleet against /ws with
  // `headers` (tokens) and count the deliveries it acknowledges. Not plugged in yet.
  for (const h of await ibisSides(c.ibis, ["memory"], c.notes)) {
    cleanup.add(h);
    c.notes.push(`${h.name}: /ws is served, but the reconnect plug-in (offline sender, pending count) is not written yet`);
  }

  console.error(`${P.clients} clients × ${P.pending} pending, ${P.rounds} rounds`);
  const rounds = await alternate<ReRound>(subjects, P.rounds, c.notes);
  const rr = ratios(rounds, "bun-hold", (r) => r.ms_to_all_acked);
  finish("reconnect", c, {
    params: P,
    raw: rounds,
    ratios: { ms_to_all_acked: rr },
    tables: [
      {
        title: `${P.clients} clients drop and reconnect at once, ${P.pending} pending each (median of ${P.rounds} rounds)`,
        columns: ["server", "reconnected", "failed", "ms until all pulled and acked", "× bun-hold (lower is better)", "clients/s"],
        rows: subjects
          .filter((s) => rounds[s.name])
          .map((s) => {
            const m = medianRound(rounds[s.name]!, (r) => r.ms_to_all_acked);
            return [s.name, m.reconnected, m.failed, rr[s.name]!.median, rr[s.name]!.ratio, m.clients_per_s];
          }),
      },
    ],
  });
});
