/**
 * A small DeliveryEngine for transport tests: records what the transport
 * hands it and answers like the interim engine (SERVER_ACK, CLIENT_ACK_CONFIRM).
 * A neighbouring layer, not a mock of the database.
 */
import type { ClientAck, DeliveryEngine, Session } from "../../src/delivery/ports.ts";
import { interimEngine } from "../../src/ws/index.ts";

export class RecordingEngine implements DeliveryEngine {
  readonly opened: Session[] = [];
  readonly closed: Session[] = [];
  readonly messages: { session: Session; raw: Record<string, unknown> }[] = [];
  readonly acks: { session: Session; ack: ClientAck }[] = [];
  readonly #inner = interimEngine(Date.now);

  onOpen(session: Session): void {
    this.opened.push(session);
  }
  onClose(session: Session): void {
    this.closed.push(session);
  }
  onMessage(session: Session, raw: Record<string, unknown>): void {
    this.messages.push({ session, raw });
    this.#inner.onMessage(session, raw);
  }
  onAck(session: Session, ack: ClientAck): void {
    this.acks.push({ session, ack });
    this.#inner.onAck(session, ack);
  }
}
