/**
 * soak: `--conns` SDK connections (friend pairs, default 2,000) with steady
 * C2C traffic for `--minutes`; the server's RSS is sampled every `--every`
 * seconds, after a full garbage collection (IBIS_BENCH_GC_SIGNAL), and its
 * slope after `--warmup` minutes is reported (least squares, MiB per minute).
 * A flat line is the goal: bounded queues, throttles that forget, caches with
 * a size (the warm-up must cover their filling). Not part of CI
 * (docs/reliability.md).
 *
 *   bun run bench:soak [--conns 2000] [--rate 400] [--minutes 10] [--warmup 5] [--every 10] [--store memory|postgres]
 */
import { IbisConnection } from "../src/client/index.ts";
import { newMessageId } from "../src/client/index.ts";
import { num, parseArgs, str } from "./lib/args.ts";
import { friendPairs, startIbisSide, type IbisStore } from "./lib/ibis.ts";
import { rssKb } from "./lib/procstat.ts";

const args = parseArgs();
const P = {
  conns: num(args, "conns", 2000),
  rate: num(args, "rate", 400), // messages per second, all connections together
  minutes: num(args, "minutes", 10),
  // Caches fill first: the ack cache (src/delivery/recent.ts) holds about 87,000 C2C messages (~4-5 min at 400/s).
  warmup: num(args, "warmup", 5),
  every: num(args, "every", 10),
  store: str(args, "store", "memory") as IbisStore,
};

/** Least-squares slope of y over x. */
export function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

async function main(): Promise<void> {
  const h = await startIbisSide(P.store, { IBIS_BENCH_GC_SIGNAL: "1" });
  if ("skipped" in h) throw new Error(h.skipped);
  let acked = 0;
  let received = 0;
  try {
    const pairs = await friendPairs(h, Math.ceil(P.conns / 2), false);
    const ends: { conn: IbisConnection; me: bigint; peer: bigint }[] = [];
    for (let i = 0; i < pairs.users.length; i += 50) {
      const batch = pairs.users.slice(i, i + 50).flatMap(([a, b], j) => {
        const [ta, tb] = pairs.tokens[i + j]!;
        const open = (token: string, device: string, me: string, peer: string) => {
          const c: { conn?: IbisConnection } = {};
          return IbisConnection.open({
            url: h.server.http,
            token,
            deviceId: device,
            reconnect: true,
            onIncoming: (e) => {
              if (e.kind !== "message") return;
              if (e.msg.type === "C2C_SERVER_ACK") acked++;
              else if (e.msg.type === "C2C") {
                received++;
                c.conn?.ack({ type: "C2C", msgId: String(e.msg.id) });
              }
            },
          }).then((conn) => ((c.conn = conn), { conn, me: BigInt(me), peer: BigInt(peer) }));
        };
        return [open(ta, `c2c-a-${i + j}`, a, b), open(tb, `c2c-b-${i + j}`, b, a)];
      });
      ends.push(...(await Promise.all(batch)));
    }
    console.log(`soak: ${ends.length} connections open on ${h.name}; ${P.rate} msg/s for ${P.minutes} min`);

    const TICK_MS = 50;
    const perTick = P.rate / (1000 / TICK_MS);
    let owed = 0;
    let next = 0;
    const load = setInterval(() => {
      owed += perTick;
      for (; owed >= 1; owed--) {
        const e = ends[next++ % ends.length]!;
        if (e.conn.readyState !== WebSocket.OPEN) continue;
        e.conn.send({ id: newMessageId("C2C"), type: "C2C", from: e.me, to: e.peer, msg_type: "text", payload: { text: "soak" }, server_ts: 0 });
      }
    }, TICK_MS);

    const start = Date.now();
    const samples: { x: number; y: number }[] = [];
    while (Date.now() - start < P.minutes * 60_000) {
      await Bun.sleep(P.every * 1000);
      process.kill(h.server.pid, "SIGUSR1"); // Bun.gc(true): RSS of what is still referenced, not of lazy collection
      await Bun.sleep(500);
      const min = (Date.now() - start) / 60_000;
      const mib = rssKb(h.server.pid) / 1024;
      samples.push({ x: min, y: mib });
      console.log(`  ${min.toFixed(1)} min  RSS ${mib.toFixed(1)} MiB  acked ${acked}  received ${received}`);
    }
    clearInterval(load);
    const after = samples.filter((s) => s.x >= P.warmup);
    const first = after[0]?.y ?? 0;
    const last = after.at(-1)?.y ?? 0;
    console.log(
      `soak result: ${ends.length} connections, ${P.rate} msg/s, ${P.minutes} min; RSS after ${P.warmup} min warm-up ` +
        `${first.toFixed(1)} → ${last.toFixed(1)} MiB, slope ${slope(after).toFixed(2)} MiB/min over ${after.length} samples; ` +
        `acked ${acked}, received ${received}`,
    );
    await Promise.allSettled(ends.map((e) => e.conn.close()));
  } finally {
    await h.stop();
  }
}

if (import.meta.main) await main();
