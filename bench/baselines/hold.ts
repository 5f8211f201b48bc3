/**
 * Raw baseline for idle connections and reconnects: accepts upgrades and holds
 * them (no idle timeout). `/?pending=P` sends P small binary frames on open
 * (the "pending messages" a reconnecting client pulls); the client's answers
 * are read and dropped. GET /gc: full GC, then RSS. Several workers may share
 * one port (PORT=<first worker's port>, reusePort); SIGUSR1 runs a full GC in
 * that worker (reusePort spreads /gc requests, a signal reaches the right one).
 */
import { announce, gcRoute } from "./common.ts";

const PENDING = new Uint8Array(64).fill(0x2a);

const server = Bun.serve<{ pending: number }>({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 0),
  reusePort: true,
  fetch(req, srv) {
    const gc = gcRoute(req);
    if (gc) return gc;
    const pending = Number(new URL(req.url).searchParams.get("pending") ?? 0);
    return srv.upgrade(req, { data: { pending } }) ? undefined : new Response("upgrade", { status: 426 });
  },
  websocket: {
    idleTimeout: 0,
    sendPings: false,
    open(ws) {
      for (let i = 0; i < ws.data.pending; i++) ws.send(PENDING);
    },
    message() {},
  },
});
announce(server);
process.on("SIGUSR1", () => Bun.gc(true));
