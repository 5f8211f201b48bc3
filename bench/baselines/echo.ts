/** Raw baseline: bare Bun.serve WebSocket echo (text stays text, binary stays binary). */
import { announce, gcRoute, MAX_PAYLOAD } from "./common.ts";

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: (req, srv) => gcRoute(req) ?? (srv.upgrade(req) ? undefined : new Response("upgrade", { status: 426 })),
  websocket: {
    maxPayloadLength: MAX_PAYLOAD,
    message(ws, msg) {
      ws.send(msg);
    },
  },
});
announce(server);
