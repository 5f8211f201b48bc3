/**
 * Raw baseline of the C2C pattern, bytes only, nothing stored. Two sockets per
 * pair (`/?pair=N&role=a|b`), svc.v2-shaped frames with an 8-byte id:
 *   a → server   MSG_C2C  [hdr 0x20][id][payload]
 *   server → a   SERVER_ACK  [hdr 0x23][id]
 *   server → b   the same MSG_C2C bytes (delivery)
 *   b → server   ACK [hdr 0x03][id]          (CLIENT_ACK)
 *   server → b   CLIENT_ACK_CONFIRM [hdr 0x23][id]
 * This is the floor any durable C2C path is measured against.
 */
import type { ServerWebSocket } from "bun";
import { announce, gcRoute } from "./common.ts";

interface Peer {
  pair: number;
  role: "a" | "b";
}
const pairs = new Map<number, { a?: ServerWebSocket<Peer>; b?: ServerWebSocket<Peer> }>();

/** Answers [hdr S2C][id] copying the id from the incoming frame (offset 9). */
function answer(ws: ServerWebSocket<Peer>, msg: Uint8Array): void {
  const out = new Uint8Array(17);
  out.set(msg.subarray(0, 9), 0);
  out[3] = 0;
  out[4] = 0x23;
  out[5] = out[6] = out[7] = 0;
  out[8] = 8;
  out.set(msg.subarray(9, 17), 9);
  ws.send(out);
}

const server = Bun.serve<Peer>({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req, srv) {
    const gc = gcRoute(req);
    if (gc) return gc;
    const q = new URL(req.url).searchParams;
    const data: Peer = { pair: Number(q.get("pair")), role: q.get("role") === "b" ? "b" : "a" };
    return srv.upgrade(req, { data }) ? undefined : new Response("upgrade", { status: 426 });
  },
  websocket: {
    open(ws) {
      const p = pairs.get(ws.data.pair) ?? {};
      p[ws.data.role] = ws;
      pairs.set(ws.data.pair, p);
    },
    message(ws, msg) {
      if (typeof msg === "string" || msg.length < 17) return;
      if (msg[4] === 0x20) {
        answer(ws, msg); // SERVER_ACK
        pairs.get(ws.data.pair)?.b?.send(msg); // delivery
      } else if (msg[4] === 0x03) answer(ws, msg); // CLIENT_ACK_CONFIRM
    },
    close(ws) {
      const p = pairs.get(ws.data.pair);
      if (p) delete p[ws.data.role];
    },
  },
});
announce(server);
