/**
 * Raw baseline of the durable C2G pattern, bytes only, nothing stored: the
 * least a server that acknowledges group messages per delivery must do.
 * Members connect to `/?topic=g` (subscribed on open); svc.v2-shaped frames
 * with an 8-byte id:
 *   publisher → server   MSG_C2G [hdr 0x21][id][payload]
 *   server → publisher   SERVER_ACK [hdr 0x23][id]
 *   server → members     the same MSG_C2G bytes (`ws.publish`: every subscriber but the publisher)
 *   member → server      ACK [hdr 0x03][id]             (CLIENT_ACK)
 *   server → member      CLIENT_ACK_CONFIRM [hdr 0x23][id]
 */
import type { ServerWebSocket } from "bun";
import { announce, gcRoute } from "./common.ts";

/** Answers [hdr S2C][id] copying the id from the incoming frame (offset 9). */
function answer(ws: ServerWebSocket<{ topic: string }>, msg: Uint8Array): void {
  const out = new Uint8Array(17);
  out.set(msg.subarray(0, 3), 0);
  out[4] = 0x23;
  out[8] = 8;
  out.set(msg.subarray(9, 17), 9);
  ws.send(out);
}

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
      if (typeof msg === "string" || msg.length < 17) return;
      if (msg[4] === 0x21) {
        answer(ws, msg); // SERVER_ACK
        ws.publish(ws.data.topic, msg); // delivery to every other member
      } else if (msg[4] === 0x03) answer(ws, msg); // CLIENT_ACK_CONFIRM
    },
  },
});
announce(server);
