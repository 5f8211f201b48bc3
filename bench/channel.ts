/**
 * channel: publish to channels of 1,000 and 100,000 subscribers (rows in
 * channel_subscription), with `online` of them connected (svc.v2 sockets, up
 * to what the box holds). One publish at a time; a publish is done when every
 * online device has its `channel_unread_count`. Reports unread pushes/s, the
 * publish call's latency and publish → last push, against raw
 * `server.publish` to the same number of sockets in the same rounds.
 *
 *   bun run bench:channel [--subscribers 1000,100000] [--online 1000,5000] [--duration 2000] [--smoke]
 *
 * PostgreSQL side by default: 100,000 subscriptions are bulk-inserted into the
 * node's database (through REST this would be the whole run).
 */
import { num, nums } from "./lib/args.ts";
import { ibisSides, type IbisHandle } from "./lib/ibis.ts";
import { LATENCY_COLUMNS, latencyCells, measure, type ClientResult, type Round } from "./lib/measure.ts";
import { runClients } from "./lib/proc.ts";
import { alternate, medianRound, ratios } from "./lib/rounds.ts";
import { baseline, common, finish, scenarioMain, timing, type ProtoTarget } from "./lib/scenario.ts";
import { round } from "./lib/stats.ts";

const c = common();
const a = c.args;
const P = {
  subscribers: nums(a, "subscribers", c.smoke ? [200] : [1000, 100_000]),
  /** Online devices per channel size (the first `online` subscribers), capped at the subscriber count. */
  online: nums(a, "online", c.smoke ? [50] : [1000, num(a, "online-max", 5000)]),
  ...timing(c),
  rounds: c.rounds,
};
const onlineFor = (i: number) => Math.min(P.subscribers[i]!, P.online[i] ?? P.online[P.online.length - 1]!);

/** One channel with `n` subscribers; tokens for the first `online`. Ids as decimal strings (params travel as JSON). */
type Channel = { channel: string; owner: string; tokens: string[] };
type Target = ProtoTarget & { channels?: Record<number, Channel> };

async function makeChannel(h: IbisHandle, n: number, online: number): Promise<Channel> {
  const [owner, ...subs] = await h.users(n + 1);
  const made = (await h.post(owner!, "/api/v1/channel/create", { name: `bench ${n}`, visibility: 0, access_type: 0, join_policy: 0 })) as {
    channel_id: bigint;
  };
  const id = made.channel_id;
  const sql = h.pg!;
  const now = Date.now();
  for (let i = 0; i < subs.length; i += 5000) {
    const rows = subs.slice(i, i + 5000).map((u) => ({ channel_id: id.toString(), user_id: u.toString(), read_seq: 0, subscribed_at: now }));
    await sql`insert into channel_subscription ${sql(rows)}`;
  }
  await sql`update channel set subscriber_count = ${subs.length} where id = ${id.toString()}`;
  const tokens = await Promise.all(subs.slice(0, online).map((u, j) => h.token(u, `ch-${j}`)));
  return { channel: id.toString(), owner: await h.token(owner!, "ch-owner"), tokens };
}

const pushRound = (t: Target, subscribers: number, online: number) =>
  measure([t.server.pid], () =>
    runClients<ClientResult>(
      "bench/load/channel.ts",
      1,
      {
        base: t.server.ws,
        http: t.server.http,
        proto: t.proto,
        online,
        durationMs: P.durationMs,
        warmupMs: P.warmupMs,
        extra: t.channels?.[subscribers],
      },
      P.durationMs + P.warmupMs + 180_000,
    ),
  );

await scenarioMain(async (cleanup) => {
  const pub = cleanup.add(await baseline("bun-publish", "publish.ts"));
  const targets: Target[] = [{ name: "bun-publish", kind: "baseline", server: pub, proto: "raw" }];
  for (const h of await ibisSides(c.ibis === "auto" ? "postgres" : c.ibis, ["postgres"], c.notes)) {
    cleanup.add(h);
    if (!h.pg) {
      c.notes.push(`${h.name} skipped: subscriptions are bulk-inserted, which needs the PostgreSQL side`);
      continue;
    }
    const channels: Record<number, Channel> = {};
    for (const [i, n] of P.subscribers.entries()) {
      console.error(`provisioning a channel of ${n} subscribers (${onlineFor(i)} online)`);
      channels[n] = await makeChannel(h, n, onlineFor(i));
    }
    targets.push({ name: h.name, kind: "ibis", server: h.server, proto: "ibis", channels });
  }

  const bySize: Record<number, { online: number; rounds: Record<string, Round[]>; ratios: ReturnType<typeof ratios> }> = {};
  for (const [i, n] of P.subscribers.entries()) {
    const online = onlineFor(i);
    console.error(`channel of ${n} subscribers, ${online} online: ${P.rounds} rounds of ${P.durationMs} ms`);
    const rounds = await alternate<Round>(
      targets.map((t) => ({ name: t.name, kind: t.kind, run: () => pushRound(t, n, online) })),
      P.rounds,
      c.notes,
    );
    bySize[n] = { online, rounds, ratios: ratios(rounds, "bun-publish", (r) => r.rate) };
  }

  const callMs = (r: Round, k: "p50_us" | "p99_us") => {
    const pc = r.clients[0]?.publish_call as Record<string, number> | undefined;
    return pc && pc.count ? round(pc[k]! / 1000, 2) : "—";
  };
  finish("channel", c, {
    params: P,
    raw: bySize,
    ratios: Object.fromEntries(Object.entries(bySize).map(([k, v]) => [k, v.ratios])),
    tables: [
      {
        title: `channel publish → unread pushes to online devices (one publish at a time; median of ${P.rounds} alternating rounds; latency = publish → each push)`,
        columns: ["subscribers", "online", "server", "pushes/s", "× bun-publish", "publishes/s", "publish call p50 ms", "publish call p99 ms", ...LATENCY_COLUMNS],
        rows: P.subscribers.flatMap((n) =>
          targets
            .filter((t) => bySize[n]!.rounds[t.name])
            .map((t) => {
              const r = bySize[n]!.ratios[t.name]!;
              const med = medianRound(bySize[n]!.rounds[t.name]!, (x) => x.rate);
              return [
                n,
                bySize[n]!.online,
                t.name,
                round(r.median),
                r.ratio,
                round(Number(med.clients[0]?.publishes_per_s ?? 0), 1),
                callMs(med, "p50_us"),
                callMs(med, "p99_us"),
                ...latencyCells(med),
              ];
            }),
        ),
      },
    ],
  });
});
