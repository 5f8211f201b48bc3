/**
 * reconnect: K clients drop and reconnect at once with P pending messages
 * each: time until every client has reconnected, pulled its P messages and
 * acknowledged each. Baseline: a raw Bun holder that pushes P frames on open.
 *
 *   bun run bench:reconnect [--clients 1000] [--pending 10] [--concurrency 256] [--smoke]
 */
import { IdGenerator } from "../src/ids/tsid.ts";
import { FrameType } from "../src/protocol/frame.ts";
import { num } from "./lib/args.ts";
import { ConnFleet } from "./lib/conns.ts";
import { ibisSides, routesC2c, type IbisHandle } from "./lib/ibis.ts";
import { startClient } from "./lib/proc.ts";
import { DIR, direction, messageFrame, v2Options } from "./load/proto/ibis-wire.ts";
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

/** The sender stores P C2C for each receiver (all offline), 256 in flight; resolves when all are SERVER_ACKed. */
async function storeOffline(h: IbisHandle, sender: bigint, receivers: bigint[]): Promise<void> {
  const ws = new WebSocket(`${h.server.ws}/ws`, v2Options(await h.token(sender, "re-sender"), "re-sender") as object);
  ws.binaryType = "nodebuffer";
  await new Promise((r, j) => ((ws.onopen = r), (ws.onerror = () => j(new Error("sender socket failed to open")))));
  const frames = receivers.map((r, i) => messageFrame("C2C", sender.toString(), r.toString(), 16, (new IdGenerator(0).next() + BigInt(i) * 1_000_000n).toString()));
  const total = receivers.length * P.pending;
  let sent = 0;
  let acked = 0;
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`only ${acked}/${total} offline messages acknowledged in 60 s`)), 60_000);
    const pump = () => {
      while (sent < total && sent - acked < 256) {
        ws.send(frames[sent % receivers.length]!(Math.floor(sent / receivers.length)));
        sent++;
      }
    };
    ws.addEventListener("message", (e) => {
      const f = e.data as Uint8Array;
      if (f[4] !== FrameType.MsgS2C || direction(f) !== DIR.C2C_SERVER_ACK) return;
      if (++acked === total) return clearTimeout(t), resolve();
      pump();
    });
    pump();
  });
  ws.close();
}

interface ReRound {
  reconnected: number;
  failed: number;
  ms_to_all_acked: number;
  clients_per_s: number;
}

await scenarioMain(async (cleanup) => {
  const hold = cleanup.add(await baseline("bun-hold", "hold.ts"));
  const subjects: { name: string; kind: "baseline" | "ibis"; run(): Promise<ReRound> }[] = [
    {
      name: "bun-hold",
      kind: "baseline",
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
  // ---- Ibis side: K receivers (seen once, so their devices have a floor) and one sender, friends of all.
  // Each round, outside the timing: the sender stores P C2C for every receiver while they are offline.
  // Timed: bench/load/pull.ts connects the K devices and pulls + acks through REST (docs/delivery.md).
  for (const h of await ibisSides(c.ibis, ["memory"], c.notes)) {
    cleanup.add(h);
    if (!(await routesC2c(h))) {
      c.notes.push(`${h.name} skipped: the node does not store or route messages yet (a node without the delivery engine); reconnect needs the delivery engine.`);
      continue;
    }
    const [sender, ...receivers] = await h.users(P.clients + 1);
    await h.befriend(receivers.map((r) => [sender!, r] as const));
    const dids = receivers.map((_, i) => `re-${i}`);
    const tokens = await Promise.all(receivers.map((r, i) => h.token(r, dids[i]!)));
    const pull = async (pending: number) =>
      (await startClient<{ reconnected: number; failed: number; ms: number }>(
        "bench/load/pull.ts",
        { ws: `${h.server.ws}/ws`, http: h.server.http, tokens, dids, pending, concurrency: P.concurrency, timeoutMs: 30_000 },
        { timeoutMs: 120_000 },
      ).result);
    await pull(0); // first sight of each device sets its floor: later messages are pending for it
    subjects.push({
      name: h.name,
      kind: "ibis",
      async run(): Promise<ReRound> {
        await storeOffline(h, sender!, receivers);
        const r = await pull(P.pending);
        await Bun.sleep(200);
        return { reconnected: r.reconnected, failed: r.failed, ms_to_all_acked: round(r.ms, 1), clients_per_s: round(r.reconnected / (r.ms / 1000)) };
      },
    });
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
