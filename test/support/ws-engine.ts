/**
 * Small DeliveryEngines for transport tests: they answer each business
 * message with its *_SERVER_ACK and each client ack with CLIENT_ACK_CONFIRM,
 * without validating, storing or routing (that is src/delivery's job), and
 * the recording one keeps what the transport handed it.
 * A neighbouring layer, not a mock of the database.
 */
import { Outbound, type ClientAck, type DeliveryEngine, type Session } from "../../src/delivery/ports.ts";
import { toId } from "../../src/ids/tsid.ts";

/** Acknowledges only: SERVER_ACK per message, CLIENT_ACK_CONFIRM per ack. */
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


export class RecordingEngine implements DeliveryEngine {
  readonly opened: Session[] = [];
  readonly closed: Session[] = [];
  readonly messages: { session: Session; raw: Record<string, unknown> }[] = [];
  readonly acks: { session: Session; ack: ClientAck }[] = [];
  /** Messages (`message <id>`) and acks (`ack <id>`) in the order they were handed over. */
  readonly log: string[] = [];
  readonly #inner = interimEngine(Date.now);

  onOpen(session: Session): void {
    this.opened.push(session);
  }
  onClose(session: Session): void {
    this.closed.push(session);
  }
  onMessage(session: Session, raw: Record<string, unknown>): void {
    this.messages.push({ session, raw });
    this.log.push(`message ${String(raw.id)}`);
    this.#inner.onMessage(session, raw);
  }
  onAck(session: Session, ack: ClientAck): void {
    this.acks.push({ session, ack });
    this.log.push(`ack ${ack.msgId}`);
    this.#inner.onAck(session, ack);
  }
}
