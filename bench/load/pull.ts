/**
 * Ibis offline-pull generator (reconnect scenario): K devices connect at once
 * (`concurrency` handshakes in flight); each, once open, pulls its pending
 * messages (`GET /api/v1/msg/offline`, docs/delivery.md) and acknowledges them
 * (`POST /api/v1/msg/offline_ack`) until it has `pending`. Reports the time
 * from the first connect to the last acknowledgement. JSON through the
 * project codec (ids are exact).
 */
import { parseJson, stringifyJson } from "../../src/protocol/json.ts";
import { emit, params, selfCpu } from "./common.ts";
import { v2Options } from "./proto/ibis-wire.ts";

interface P {
  ws: string;
  http: string;
  tokens: string[];
  dids: string[];
  pending: number;
  concurrency: number;
  timeoutMs: number;
}
const p = params<P>();
const sockets: WebSocket[] = [];
let failed = 0;
let pulled = 0;
let closes = 0;
let done = false;

async function rest(i: number, method: "GET" | "POST", path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${p.http}${path}`, {
    method,
    headers: { authorization: `Bearer ${p.tokens[i]}`, "x-device-id": p.dids[i]!, "content-type": "application/json" },
    body: body === undefined ? undefined : stringifyJson(body),
  });
  const env = parseJson(await res.text()) as { code?: number; payload?: Record<string, unknown> };
  if (res.status !== 200 || env.code !== 0) throw new Error(`${method} ${path}: ${res.status}`);
  return env.payload!;
}

/** Connects device i, pulls and acks until it has `pending` messages. */
async function client(i: number): Promise<boolean> {
  const ws = new WebSocket(p.ws, v2Options(p.tokens[i]!, p.dids[i]!) as object);
  sockets.push(ws);
  ws.addEventListener("close", () => void (done || closes++));
  const opened = await new Promise<boolean>((r) => {
    ws.addEventListener("open", () => r(true), { once: true });
    ws.addEventListener("error", () => r(false), { once: true });
  });
  if (!opened) return false;
  let got = 0;
  const deadline = Date.now() + p.timeoutMs;
  while (got < p.pending && Date.now() < deadline) {
    const page = await rest(i, "GET", `/api/v1/msg/offline?did=${encodeURIComponent(p.dids[i]!)}&limit=1000`);
    const ids = (page.list as { id: string }[]).map((m) => m.id);
    if (ids.length === 0) {
      await Bun.sleep(20);
      continue;
    }
    await rest(i, "POST", "/api/v1/msg/offline_ack", { did: p.dids[i], msg_ids: ids });
    got += ids.length;
  }
  pulled += got;
  return got >= p.pending;
}

const cpu = selfCpu();
const t0 = performance.now();
let next = 0;
let ok = 0;
const lane = async () => {
  while (next < p.tokens.length) {
    const i = next++;
    if (await client(i).catch(() => false)) ok++;
    else failed++;
  }
};
await Promise.all(Array.from({ length: Math.min(p.concurrency, p.tokens.length) }, lane));
const ms = performance.now() - t0;
done = true;
for (const ws of sockets) ws.close();
emit("result", { reconnected: ok, failed, pulled, ms, unexpected_closes: closes, ...cpu() });
process.exit(0);
