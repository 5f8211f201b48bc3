/**
 * c2g: fan-out to groups of 10/100/1,000 members. Member 0 publishes with
 * `window` messages in flight (a message is done when every member has it);
 * deliveries/s and per-delivery latency. Baseline: bare `server.publish` to a
 * topic (the least a Bun server can do per delivery).
 *
 *   bun run bench:c2g [--sizes 10,100,1000] [--window 8] [--size 64] [--duration 2000] [--smoke]
 */
import { num, nums } from "./lib/args.ts";
import { IdGenerator } from "../src/ids/tsid.ts";
import { ibisSides, routesC2c, type IbisHandle } from "./lib/ibis.ts";
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

/** Ibis targets carry one provisioned group per size (decimal ids: params travel as JSON). */
type Group = { users: string[]; tokens: string[]; gid: string };
type Target = ProtoTarget & { groups?: Record<number, Group> };

/** A group of `members` real users (member 0 owns it), with a token per member's device. */
async function makeGroup(h: IbisHandle, members: number): Promise<Group> {
  const ids = await h.users(members);
  const gid = await h.group(ids[0]!, ids.slice(1));
  const tokens = await Promise.all(ids.map((u, j) => h.token(u, `c2g-${j}`)));
  return { users: ids.map(String), tokens, gid: gid.toString() };
}

const fanoutRound = (t: Target, members: number) =>
  measure([t.server.pid], () =>
    runClients<ClientResult>(
      "bench/load/fanout.ts",
      1,
      {
        base: t.server.ws,
        proto: t.proto,
        members,
        window: P.window,
        size: P.size,
        durationMs: P.durationMs,
        warmupMs: P.warmupMs,
        maxMessages: 0,
        // A fresh TSID per round: message ids never repeat (the store dedupes by id).
        extra: t.groups && { ...t.groups[members], tsid: new IdGenerator(0).next().toString() },
      },
      P.durationMs + P.warmupMs + 60_000,
    ),
  );

await scenarioMain(async (cleanup) => {
  const pub = cleanup.add(await baseline("bun-publish", "publish.ts"));
  const targets: Target[] = [{ name: "bun-publish", kind: "baseline", server: pub, proto: "raw" }];
  // ---- Ibis side: one group per size, provisioned before any round.
  for (const h of await ibisSides(c.ibis, ["memory"], c.notes)) {
    cleanup.add(h);
    if (!(await routesC2c(h))) {
      c.notes.push(`${h.name} skipped: the node does not route messages yet (a node without the delivery engine); C2G fan-out needs the delivery engine.`);
      continue;
    }
    const groups: Record<number, Group> = {};
    for (const m of P.sizes) groups[m] = await makeGroup(h, m);
    targets.push({ name: h.name, kind: "ibis", server: h.server, proto: "ibis", groups });
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
