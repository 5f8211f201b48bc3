/**
 * c2g: fan-out to groups of 10/100/1,000/10,000 members. Member 0 publishes
 * with `window` messages in flight (a message is done when every member has
 * it); deliveries/s and per-delivery latency. Two baselines in the same run:
 * bare `server.publish` to a topic (the least a Bun server can do per
 * delivery), and a bare relay of the durable C2G pattern (SERVER_ACK to the
 * publisher, one CLIENT_ACK and one confirm per delivery, bytes only:
 * bench/baselines/c2g-relay.ts), the physical limit of what Ibis does.
 * On the PostgreSQL side, a second phase sends a fixed number of messages per
 * `--stat-sizes` group and reads the rows written and transactions committed
 * per message from PostgreSQL's own statistics (pg_stat_user_tables,
 * pg_stat_database).
 *
 *   bun run bench:c2g [--sizes 10,100,1000,10000] [--window 8] [--size 64] [--duration 2000]
 *                     [--stat-sizes 10,1000] [--stat-messages 500] [--smoke]
 */
import type postgres from "postgres";
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
  sizes: nums(a, "sizes", c.smoke ? [10] : [10, 100, 1000, 10000]),
  window: num(a, "window", 8),
  size: num(a, "size", 64),
  ...timing(c),
  rounds: c.rounds,
  statSizes: nums(a, "stat-sizes", c.smoke ? [10] : [10, 1000]),
  statMessages: num(a, "stat-messages", c.smoke ? 50 : 500),
};

/** Ibis targets carry one provisioned group per size (decimal ids: params travel as JSON). */
type Group = { users: string[]; tokens: string[]; gid: string };
type Target = Omit<ProtoTarget, "proto"> & { proto: "raw" | "relay" | "ibis"; groups?: Record<number, Group>; pg?: postgres.Sql };

/** A group of `members` real users (member 0 owns it), with a token per member's device. */
async function makeGroup(h: IbisHandle, members: number): Promise<Group> {
  const ids = await h.users(members);
  const gid = await h.group(ids[0]!, ids.slice(1));
  const tokens = await Promise.all(ids.map((u, j) => h.token(u, `c2g-${j}`)));
  return { users: ids.map(String), tokens, gid: gid.toString() };
}

const fanout = (t: Target, members: number, maxMessages = 0) =>
  runClients<ClientResult>(
    "bench/load/fanout.ts",
    1,
    {
      base: t.server.ws,
      proto: t.proto,
      members,
      window: P.window,
      size: P.size,
      durationMs: maxMessages ? 600_000 : P.durationMs,
      warmupMs: maxMessages ? 0 : P.warmupMs,
      maxMessages,
      // A fresh TSID per round: message ids never repeat (the store dedupes by id).
      extra: t.groups && { ...t.groups[members], tsid: new IdGenerator(0).next().toString() },
    },
    (maxMessages ? 600_000 : P.durationMs + P.warmupMs) + 120_000,
  );

const fanoutRound = (t: Target, members: number) => measure([t.server.pid], () => fanout(t, members));

const TABLES = ["messages", "timeline", "timeline_head", "timeline_cursor", "inbox", "delivery_mark", "delivery_device"];

/** Rows inserted/updated/deleted per table and transactions committed so far, once they stop moving. */
async function pgCounters(pg: postgres.Sql): Promise<Record<string, number>> {
  // Other backends report at most once a second, when idle: read until two reads a second apart agree.
  let last = "";
  for (let i = 0; i < 15; i++) {
    await Bun.sleep(1_000);
    const now = await pgRead(pg);
    if (JSON.stringify(now) === last) return now;
    last = JSON.stringify(now);
  }
  return JSON.parse(last) as Record<string, number>;
}

async function pgRead(pg: postgres.Sql): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const tables = await pg`select relname, n_tup_ins, n_tup_upd, n_tup_del from pg_stat_user_tables where relname = any(${TABLES})`;
  for (const r of tables) {
    out[`${r.relname}.ins`] = Number(r.n_tup_ins);
    out[`${r.relname}.upd`] = Number(r.n_tup_upd);
    out[`${r.relname}.del`] = Number(r.n_tup_del);
  }
  const [db] = await pg`select xact_commit from pg_stat_database where datname = current_database()`;
  out.xact_commit = Number(db!.xact_commit);
  return out;
}

/** `statMessages` messages to a group of `members`; what PostgreSQL counted, per message. */
async function perMessage(t: Target, members: number): Promise<Record<string, number>> {
  const before = await pgCounters(t.pg!);
  const [r] = await fanout(t, members, P.statMessages);
  const after = await pgCounters(t.pg!);
  const n = Number(r?.completed ?? 0) || P.statMessages;
  const out: Record<string, number> = { members, messages: n };
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d) out[k] = round(d / n, 3);
  }
  return out;
}

await scenarioMain(async (cleanup) => {
  const pub = cleanup.add(await baseline("bun-publish", "publish.ts"));
  const relay = cleanup.add(await baseline("bun-c2g-relay", "c2g-relay.ts"));
  const targets: Target[] = [
    { name: "bun-publish", kind: "baseline", server: pub, proto: "raw" },
    { name: "bun-c2g-relay", kind: "baseline", server: relay, proto: "relay" },
  ];
  // ---- Ibis side: one group per size, provisioned before any round.
  for (const h of await ibisSides(c.ibis, ["postgres"], c.notes)) {
    cleanup.add(h);
    if (!(await routesC2c(h))) {
      c.notes.push(`${h.name} skipped: the node does not route messages yet (a node without the delivery engine); C2G fan-out needs the delivery engine.`);
      continue;
    }
    const groups: Record<number, Group> = {};
    for (const m of new Set([...P.sizes, ...(h.pg ? P.statSizes : [])])) groups[m] = await makeGroup(h, m);
    targets.push({ name: h.name, kind: "ibis", server: h.server, proto: "ibis", groups, ...(h.pg ? { pg: h.pg } : {}) });
  }

  const bySize: Record<number, { rounds: Record<string, Round[]>; ratios: ReturnType<typeof ratios>; toRelay: ReturnType<typeof ratios> }> = {};
  for (const members of P.sizes) {
    console.error(`group of ${members}: window ${P.window}, ${P.rounds} rounds of ${P.durationMs} ms`);
    const rounds = await alternate<Round>(
      targets.map((t) => ({ name: t.name, kind: t.kind, run: () => fanoutRound(t, members) })),
      P.rounds,
      c.notes,
    );
    bySize[members] = {
      rounds,
      ratios: ratios(rounds, "bun-publish", (r) => r.rate),
      toRelay: ratios(rounds, "bun-c2g-relay", (r) => r.rate),
    };
  }

  // ---- Rows and transactions per message, from PostgreSQL's statistics.
  const stats: Record<string, number>[] = [];
  for (const t of targets.filter((x) => x.pg)) for (const m of P.statSizes) stats.push({ ...(await perMessage(t, m)) });
  const statKeys = [...new Set(stats.flatMap((s) => Object.keys(s)))].filter((k) => k !== "members" && k !== "messages").sort();

  finish("c2g", c, {
    params: P,
    raw: { bySize, stats },
    ratios: Object.fromEntries(Object.entries(bySize).map(([k, v]) => [k, { publish: v.ratios, relay: v.toRelay }])),
    tables: [
      {
        title: `fan-out deliveries/s (window ${P.window}, ${P.size} B; median of ${P.rounds} alternating rounds)`,
        columns: ["members", "server", "deliveries/s", "× bun-publish", "× bun-c2g-relay", "messages/s", ...LATENCY_COLUMNS],
        rows: P.sizes.flatMap((m) =>
          targets.filter((t) => bySize[m]!.rounds[t.name]).map((t) => {
            const r = bySize[m]!.ratios[t.name]!;
            const med = medianRound(bySize[m]!.rounds[t.name]!, (x) => x.rate);
            return [m, t.name, round(r.median), r.ratio, bySize[m]!.toRelay[t.name]!.ratio, round(Number(med.clients[0]?.messages_per_s ?? 0)), ...latencyCells(med)];
          }),
        ),
      },
      ...(stats.length
        ? [
            {
              title: `PostgreSQL per message (pg_stat_user_tables rows, pg_stat_database commits; ${P.statMessages} messages per size)`,
              columns: ["members", ...statKeys],
              rows: stats.map((s) => [s.members!, ...statKeys.map((k) => s[k] ?? 0)]),
            },
          ]
        : []),
    ],
  });
});
