/**
 * Raw baseline of C2G fan-out: `/?topic=g` subscribes on open; any message a
 * client sends is passed to `server.publish(topic, bytes)` unchanged (every
 * subscriber, the sender included, receives it).
 */
import { announce, gcRoute } from "./common.ts";

const server = Bun.serve<{ topic: string }>({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req, srv) {
    const gc = gcRoute(req);
    if (gc) return gc;
    const topic = new URL(req.url).searchParams.get("topic") ?? "g";
    return srv.upgrade(req, { data: { topic } }) ? undefined : new Response("upgrade", { status: 426 });
  },
  websocket: {
    open(ws) {
      ws.subscribe(ws.data.topic);
    },
    message(ws, msg) {
      server.publish(ws.data.topic, msg);
    },
  },
});
announce(server);
