/**
 * TEMPORARY — replaced by the delivery engine (src/delivery, issue 4).
 * Answers each business message with its *_SERVER_ACK and each client ack
 * with CLIENT_ACK_CONFIRM, without validating, storing or routing anything,
 * so the transport runs end to end before delivery lands. Do not build on it.
 */
import { Outbound, type ClientAck, type DeliveryEngine, type Session } from "../delivery/ports.ts";
import { toId } from "../ids/tsid.ts";

export function interimEngine(now: () => number): DeliveryEngine {
  return {
    onOpen() {},
    onClose() {},
    onMessage(session: Session, raw: Record<string, unknown>) {
      const id = typeof raw.id === "string" ? raw.id : "";
      const type = typeof raw.type === "string" ? raw.type : "C2S";
      session.send(
        new Outbound({
          id,
          type: `${type}_SERVER_ACK`,
          from: session.userId,
          to: toId(raw.to) ?? 0n,
          payload: {},
          server_ts: now(),
          in_reply_to: id,
          ...(typeof raw.msg_type === "string" ? { msg_type: raw.msg_type } : {}),
        }),
      );
    },
    onAck(session: Session, ack: ClientAck) {
      session.send(
        new Outbound({ id: ack.msgId, type: "CLIENT_ACK_CONFIRM", from: null, to: session.userId, payload: {}, action: "CLIENT_ACK_CONFIRM", server_ts: now() }),
      );
    },
  };
}
