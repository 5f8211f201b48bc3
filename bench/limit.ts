/**
 * limit: the 16 MiB frame limit end to end. Raw side: 16 MiB + 9-byte
 * (svc.v2 header + a full 16 MiB payload) binary frames round-trip through a
 * bare Bun echo and a Node `ws` echo: MB/s. Ibis side: a frame declaring
 * 16 MiB + 1 must be answered with ERROR frame_too_large and a ping on the
 * same connection must still get its pong (a failure fails the run); MB/s of
 * the largest C2C that fits one frame, sent to a friend and delivered (stored,
 * acked and confirmed), one in flight. Meanwhile a second generator runs a
 * small-message C2C stream between other friends (open loop, --small-rate
 * messages/s for --small-duration ms once its connections are open, after
 * --small-warmup ms unmeasured, 0 by default; the large messages start with
 * that window): its p99 shows whether large messages stall small ones on the
 * same node. --payload random makes the large message's text random Base64
 * (default x repeated, which PostgreSQL's lz4 shrinks ~250×): what a 16 MiB
 * ciphertext writes to the WAL.
 *
 *   bun run bench:limit [--count 8] [--mib 16] [--payload x|random] [--small-rate 200] [--small-pairs 4] [--small-warmup 0] [--small-duration 1500] [--ibis memory|postgres|both] [--smoke]
 */
import { num, str } from "./lib/args.ts";
import type { PayloadFill } from "./load/proto/ibis-wire.ts";
import { IdGenerator } from "../src/ids/tsid.ts";
import { friendPairs, ibisSides, routesC2c, type IbisHandle } from "./lib/ibis.ts";
import { Histogram } from "./lib/hist.ts";
import { measure, type ClientResult, type Round } from "./lib/measure.ts";
import { runClients, startClient, type Client, type RunningServer } from "./lib/proc.ts";
import { alternate, medianRound, ratios, smallStreamOf } from "./lib/rounds.ts";
import { baseline, common, finish, nodePeer, scenarioMain } from "./lib/scenario.ts";
import { round, sum } from "./lib/stats.ts";
import { frame, getSeq, HEADER, pingFrame, setSeq, T } from "./lib/wire.ts";

const c = common();
const a = c.args;
const MiB = 1024 * 1024;
const P = {
  mib: num(a, "mib", 16),
  count: num(a, "count", c.smoke ? 2 : 8),
  durationMs: num(a, "duration", c.smoke ? 5000 : 20000),
  smallRate: num(a, "small-rate", c.smoke ? 50 : 200),
  smallPairs: num(a, "small-pairs", 4),
  smallDurationMs: num(a, "small-duration", c.smoke ? 500 : 1500),
  smallWarmupMs: num(a, "small-warmup", 0),
  payload: payloadFill(str(a, "payload", "x")),
  rounds: c.rounds,
};
const FRAME = P.mib * MiB + HEADER;

function payloadFill(v: string): PayloadFill {
  if (v === "x" || v === "random") return v;
  throw new Error(`--payload ${v}: x (compresses ~250×) or random (Base64 of random bytes, as ciphertext)`);
}

/** Ibis: 16 MiB + 1 declared → ERROR frame_too_large, then ping → pong on the same socket. */
async function frameLimitCheck(h: IbisHandle): Promise<{ ok: boolean; detail: string }> {
  const ws = new WebSocket(`${h.server.ws}/ws`, { protocols: ["svc.v2"], headers: await h.headers((await h.users(1))[0]!, "limit-0") } as object);
  ws.binaryType = "nodebuffer";
  const replies: Uint8Array[] = [];
  const next = () =>
    new Promise<Uint8Array>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error("no reply in 5 s")), 5000);
      ws.addEventListener("message", (e) => (clearTimeout(t), resolve(e.data as Uint8Array)), { once: true });
    });
  try {
    await new Promise((r, j) => ((ws.onopen = r), (ws.onerror = () => j(new Error("open failed")))));
    ws.send(frame(T.C2C, 0, 16, 16 * MiB + 1)); // declares one byte over the limit
    const err = await next();
    replies.push(err);
    const reason = new TextDecoder().decode(err.subarray(HEADER));
    const ping = pingFrame();
    setSeq(ping, 4242);
    ws.send(ping);
    const pong = await next();
    const ok = err[4] === T.ERROR && reason === "frame_too_large" && pong[4] === T.PONG && getSeq(pong) === 4242;
    return { ok, detail: `error type ${err[4]} "${reason}", then type ${pong[4]} seq ${getSeq(pong)}` };
  } catch (e) {
    return { ok: false, detail: (e as Error).message };
  } finally {
    ws.close();
  }
}

await scenarioMain(async (cleanup) => {
  const bun = cleanup.add(await baseline("bun-echo", "echo.ts"));
  const node = await nodePeer(c, cleanup);
  const targets: { name: string; kind: "baseline" | "peer" | "ibis"; server: RunningServer; run?: () => Promise<Round> }[] = [{ name: "bun-echo", kind: "baseline", server: bun }];
  if (node) targets.push({ name: "node-ws-echo", kind: "peer", server: node });
  // ---- Ibis side: the limit check runs as soon as /ws is served; the MB/s side needs a
  // large-frame echo path (a 16 MiB C2C to oneself) plugged in here.
  const checks: Record<string, { ok: boolean; detail: string }> = {};
  for (const h of await ibisSides(c.ibis, ["memory"], c.notes)) {
    cleanup.add(h);
    checks[h.name] = await frameLimitCheck(h);
    // MB/s: the largest C2C that fits one frame, to a friend (stored, delivered, acked, confirmed), one in flight.
    if (!(await routesC2c(h))) continue;
    const pairs = await friendPairs(h, 1, false);
    const smallPairs = P.smallRate > 0 ? await friendPairs(h, P.smallPairs, false) : undefined;
    const text = P.mib * MiB - 512; // the §2.8 JSON around it stays inside the frame's payload limit
    // The concurrent small stream: 64 B C2C between other friends, open loop. The large messages start when its
    // window opens: once its connections are open (and after --small-warmup ms unmeasured, 0 by default). Started
    // together, the first 16 MiB message met the stream's own connects and every round's first one was its worst
    // (bench/FINDINGS.md, seventeenth section).
    const startSmall = (): Client<ClientResult> | undefined =>
      smallPairs &&
      startClient<ClientResult>(
        "bench/load/c2c.ts",
        { base: h.server.ws, proto: "ibis", pairs: P.smallPairs, pairOffset: 0, window: 1, rate: P.smallRate, size: 64, durationMs: P.smallDurationMs, warmupMs: P.smallWarmupMs, maxMessages: 0, extra: { ...smallPairs, tsid: new IdGenerator(1).next().toString() } },
        { timeoutMs: P.smallWarmupMs + P.smallDurationMs + 30_000 },
      );
    const smallResult = async (client: Client<ClientResult> | undefined): Promise<Record<string, unknown>> => {
      if (!client) return {};
      const r = await client.result;
      const l = Histogram.from(r.hist ? [r.hist] : []).summary();
      // Where a small message waits: up to its SERVER_ACK (uplink, store, commit) or after (push, ack, confirm).
      const ack = (r as { server_ack?: { p99_us: number } }).server_ack;
      return {
        small_rate: Number(r.rate ?? 0),
        small_p50_ms: round(l.p50_us / 1000, 2),
        small_p99_ms: round(l.p99_us / 1000, 2),
        small_max_ms: round(l.max_us / 1000, 2),
        ...(ack ? { small_ack_p99_ms: round(ack.p99_us / 1000, 2) } : {}),
        ...(r.hist ? { small_hist: r.hist } : {}),
      };
    };
    targets.push({
      name: h.name,
      kind: "ibis",
      server: h.server,
      run: () =>
        measure([h.server.pid], async () => {
          const client = startSmall();
          // Awaited in smallResult; a stream that fails before its window opens is reported by event() instead.
          client?.result.catch(() => {});
          await client?.event("measuring");
          const [r, small] = await Promise.all([
            runClients<ClientResult>(
              "bench/load/c2c.ts",
              1,
              { base: h.server.ws, proto: "ibis", pairs: 1, pairOffset: 0, window: 1, rate: 0, size: text, durationMs: P.durationMs, warmupMs: 0, maxMessages: P.count, extra: { ...pairs, tsid: new IdGenerator(0).next().toString(), fill: P.payload } },
              P.durationMs + 30_000,
            ),
            smallResult(client),
          ]);
          // Delivered payload bytes per second (the echo figures count the bytes that came back).
          return r.map((x) => ({ ...x, ...small, mb_per_s: x.seconds ? (Number(x.completed) * text) / MiB / Number(x.seconds) : 0 }));
        }),
    });
  }

  console.error(`${P.count} frames of ${FRAME} B per round, ${P.rounds} rounds`);
  const rounds = await alternate<Round>(
    targets.map((t) => ({
      name: t.name,
      kind: t.kind,
      run: t.run ?? (() =>
        measure([t.server.pid], () =>
          runClients<ClientResult>(
            "bench/load/echo.ts",
            1,
            { url: t.server.ws, conns: 1, window: 1, mode: "binary", size: FRAME, durationMs: P.durationMs, warmupMs: 0, maxMessages: P.count },
            P.durationMs + 30_000,
          ),
        )),
    })),
    P.rounds,
    c.notes,
  );
  const mbps = (r: Round) => Number(r.clients[0]?.mb_per_s ?? 0);
  // The server's minor page faults per large frame, as MiB of fresh memory (4 KiB pages): copies into memory
  // just mapped cost the event loop ~2 µs a page (bench/alloc-faults.ts). Ibis' figure includes the small stream's.
  const freshMibPerFrame = (r: Round) => {
    const frames = sum(r.clients.map((x) => Number(x.rate) * Number(x.seconds ?? 0)));
    return frames ? round((r.server_minor_faults * 4) / 1024 / frames, 1) : "";
  };
  const rr = ratios(rounds, "bun-echo", mbps);
  finish("limit", c, {
    params: { ...P, frame_bytes: FRAME },
    raw: { rounds, checks },
    ratios: { mb_per_s: rr },
    tables: [
      {
        title: `${P.mib} MiB-payload frames round-trip (1 conn, 1 in flight, ${P.count} per round; median of ${P.rounds} alternating rounds; Ibis's text ${P.payload === "x" ? "x repeated" : "random Base64"})`,
        columns: [
          "server", "MB/s (echoed; Ibis: delivered)", "× bun-echo", "p50 ms", "max ms", "server CPU %", "server RSS MB", "fresh MiB per frame", "client CPU %",
          `small C2C p99 ms (${P.smallRate}/s alongside; every round's messages)`, "small C2C p99 ms per round", "its SERVER_ACK p99 ms (median round)",
          "largest disk write in 100 ms per round, MB (the kernel's writeback: docs/operations.md)",
        ],
        rows: targets.filter((t) => rounds[t.name]).map((t) => {
          const m = medianRound(rounds[t.name]!, mbps);
          const small = smallStreamOf(rounds[t.name]!);
          return [
            t.name, round(rr[t.name]!.median, 1), rr[t.name]!.ratio, round(m.latency.p50_us / 1000, 1), round(m.latency.max_us / 1000, 1), m.server_cpu_pct,
            round(m.server_rss_kb / 1024, 1), freshMibPerFrame(m), m.client_cpu_pct, small?.p99 ?? "", small?.perRound ?? "", small?.ackP99 ?? "",
            rounds[t.name]!.map((r) => r.machine_disk_burst_mb ?? "").join(" / "),
          ];
        }),
      },
      ...(Object.keys(checks).length
        ? [{ title: "16 MiB + 1 declared", columns: ["server", "ERROR frame_too_large and still serving", "detail"], rows: Object.entries(checks).map(([n, x]) => [n, x.ok ? "yes" : "NO", x.detail]) }]
        : []),
    ],
  });
  // A broken frame limit is a broken scenario, not a slow one: the smoke run must fail on it.
  const broken = Object.entries(checks).filter(([, x]) => !x.ok);
  if (broken.length) throw new Error(`frame-limit check failed: ${broken.map(([n, x]) => `${n}: ${x.detail}`).join("; ")}`);
});
