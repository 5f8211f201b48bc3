/**
 * Channel push load generator: `online` sockets of one channel's subscribers
 * plus a publisher, closed loop (one publish at a time): a publish is complete
 * when every online socket has its push. Measures pushes/s, the time from
 * publish to the last socket's push, and (Ibis) the publish call's own latency.
 * Raw mode speaks to bench/baselines/publish.ts: the publisher is one more
 * socket on the topic whose frame the server hands to `server.publish`.
 * Ibis mode: svc.v2 sockets of subscribed users; the publisher POSTs
 * /api/v1/channel/:id/message; each socket counts its `channel_unread_count`
 * S2C frames (found by the action's bytes, no decoding in the hot path).
 */
import { FrameType } from "../../src/protocol/frame.ts";
import { Histogram } from "../lib/hist.ts";
import { frame, T } from "../lib/wire.ts";
import { emit, openAll, params, stopped, Window } from "./common.ts";
import { v2Options } from "./proto/ibis-wire.ts";

interface P {
  base: string;
  http: string;
  proto: "raw" | "ibis";
  online: number;
  durationMs: number;
  warmupMs: number;
  /** Ibis: tokens of the online subscribers (device `ch-<i>`), the publisher's token and the channel id (decimal). */
  extra?: { tokens: string[]; owner: string; channel: string };
}
const p = params<P>();
const ibis = p.proto === "ibis" ? p.extra! : undefined;
const ACTION = Buffer.from("channel_unread_count");
const topic = `c${p.index}`;
const raw = frame(T.C2G, 0, 16);
const received = new Uint32Array(p.online);
const push = new Histogram(); // publish → push, per push
const call = new Histogram(); // the publish request itself (Ibis)
const win = new Window(p.warmupMs, p.durationMs);
win.onOpen = () => {
  call.reset();
  push.reset();
  pushes = completed = 0;
};
let published = 0;
let got = 0; // pushes for the current publish
let completed = 0;
let pushes = 0;
let sentAt = 0;
let publisher: WebSocket | undefined;

const body = JSON.stringify({ content: "bench", msg_type: "text" });

function publish(): void {
  published++;
  got = 0;
  sentAt = performance.now();
  if (!ibis) {
    publisher!.send(raw);
    return;
  }
  fetch(`${p.http}/api/v1/channel/${ibis.channel}/message`, {
    method: "POST",
    headers: { authorization: `Bearer ${ibis.owner}`, "content-type": "application/json" },
    body,
  }).then(
    async (res) => {
      const text = await res.text();
      if (!win.stopped) call.record((performance.now() - sentAt) * 1000);
      if (res.status !== 200 || !text.includes('"code":0')) throw new Error(`publish refused: ${res.status} ${text.slice(0, 200)}`);
    },
    (e: Error) => {
      console.error(e);
      process.exit(1);
    },
  );
}

function onMessage(j: number, data: Uint8Array): void {
  if (ibis) {
    if (data[4] !== FrameType.MsgS2C || Buffer.from(data.buffer, data.byteOffset, data.byteLength).indexOf(ACTION) < 0) return;
  }
  // Pushes may coalesce only across publishes in flight; with one at a time each publish is one push per socket.
  if (++received[j]! < published) return;
  if (!win.stopped) {
    pushes++;
    push.record((performance.now() - sentAt) * 1000);
  }
  if (++got < p.online) return;
  if (!win.stopped) completed++;
  if (!win.stopped) publish();
}

const sockets = await openAll(
  p.online,
  () => (ibis ? `${p.base}/ws` : `${p.base}/?topic=${topic}`),
  (j) => (ibis ? v2Options(ibis.tokens[j]!, `ch-${j}`) : {}),
  (ws, j) => ws.addEventListener("message", (e) => onMessage(j, e.data as Uint8Array)),
  { timeoutMs: 120_000 },
);
if (!ibis) {
  [publisher] = await openAll(1, () => `${p.base}/?topic=${topic}`, () => ({}), () => {});
}
await Bun.sleep(200); // connect-time notices (pull_offline_msg) are out of the way
win.start();
publish();
await stopped(win);
for (const ws of sockets) ws.close();
publisher?.close();
emit("result", {
  online: p.online,
  published,
  completed,
  pushes,
  seconds: win.seconds,
  rate: win.seconds ? pushes / win.seconds : 0,
  publishes_per_s: win.seconds ? completed / win.seconds : 0,
  publish_call: call.summary(),
  latency: push.summary(),
  hist: push.snapshot(),
  ...win.cpu,
});
process.exit(0);
