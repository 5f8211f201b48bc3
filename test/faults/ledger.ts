/**
 * Clients that keep their own books (the fault suites): every message a
 * sender got a SERVER_ACK for must reach every recipient device, by push or
 * by the offline pull after recovery. `report` counts what was lost and what
 * arrived more than once (allowed: delivery is at least once, ids deduplicate).
 */
import { IbisConnection, newMessageId, type SubProtocolName } from "../../src/client/index.ts";
import type { Incoming } from "../../src/client/incoming.ts";
import type { ImMessage } from "../../src/delivery/ports.ts";
import { rest } from "../cluster/processes.ts";

export interface Device {
  readonly userId: bigint;
  readonly deviceId: string;
  readonly token: string;
}

const keyOf = (userId: bigint, deviceId: string) => `${userId}/${deviceId}`;

export class Ledger {
  /** Message id → recipient device keys, for every message sent. */
  readonly #recipients = new Map<string, readonly string[]>();
  readonly acked = new Set<string>();
  readonly refused = new Map<string, string>();
  /** Device key → message id → times received. */
  readonly #received = new Map<string, Map<string, number>>();

  sent(id: string, recipients: readonly Device[]): void {
    this.#recipients.set(id, recipients.map((d) => keyOf(d.userId, d.deviceId)));
  }

  received(to: Device, id: string): void {
    const key = keyOf(to.userId, to.deviceId);
    let m = this.#received.get(key);
    if (!m) this.#received.set(key, (m = new Map()));
    m.set(id, (m.get(id) ?? 0) + 1);
  }

  /** Acked messages not (yet) received by some recipient device. */
  missing(): { id: string; device: string }[] {
    const out: { id: string; device: string }[] = [];
    for (const id of this.acked) {
      for (const device of this.#recipients.get(id) ?? []) if (!this.#received.get(device)?.has(id)) out.push({ id, device });
    }
    return out;
  }

  report(): { acked: number; lost: number; duplicated: number; refused: number } {
    let duplicated = 0;
    for (const m of this.#received.values()) for (const n of m.values()) if (n > 1) duplicated += n - 1;
    return { acked: this.acked.size, lost: this.missing().length, duplicated, refused: this.refused.size };
  }
}

/** One SDK connection (reconnecting) that acks what it receives and books what it sends. */
export class LedgerClient {
  conn!: IbisConnection;
  constructor(
    /** Books of the current phase (a fault suite starts new ones per fault). */
    public ledger: Ledger,
    readonly me: Device,
    readonly url: string,
  ) {}

  async open(protocols: SubProtocolName[] = ["svc.v2"]): Promise<this> {
    this.conn = await IbisConnection.open({
      url: this.url,
      token: this.me.token,
      deviceId: this.me.deviceId,
      deviceType: "desktop",
      protocols,
      reconnect: true,
      onIncoming: (e) => this.#on(e),
    });
    return this;
  }

  /** Sends one text message; false when the socket is not open (reconnecting): nothing is booked then. */
  send(type: "C2C" | "C2G", to: bigint, recipients: readonly Device[]): boolean {
    const msg: ImMessage = { id: newMessageId(type), type, from: this.me.userId, to, msg_type: "text", payload: { text: "ledger" }, server_ts: 0 };
    try {
      if (this.conn.readyState !== WebSocket.OPEN) return false;
      this.ledger.sent(msg.id, recipients);
      this.conn.send(msg);
      return true;
    } catch {
      return false;
    }
  }

  #on(e: Incoming): void {
    if (e.kind !== "message") return;
    const m = e.msg;
    if (typeof m.type === "string" && m.type.endsWith("_SERVER_ACK")) {
      this.ledger.acked.add(String(m.in_reply_to ?? m.id));
    } else if (m.type === "S2C" && m.action === "invalid_message" && typeof m.in_reply_to === "string") {
      this.ledger.refused.set(m.in_reply_to, String(m.payload?.reason ?? m.payload?.content ?? ""));
    } else if (m.type === "C2C" || m.type === "C2G") {
      this.ledger.received(this.me, String(m.id));
      try {
        this.conn.ack({ type: m.type, msgId: String(m.id) });
      } catch {
        // reconnecting: the message stays pending and comes again (push or pull)
      }
    }
  }

  /** Pulls this device's offline messages until none are left, acknowledging each page. */
  async pull(base: string): Promise<void> {
    for (let round = 0; round < 1000; round++) {
      const res = await rest(base, "GET", `/api/v1/msg/offline?did=${encodeURIComponent(this.me.deviceId)}&limit=1000`, { token: this.me.token });
      if (res.body?.code !== 0) throw new Error(`msg/offline: ${JSON.stringify(res.body)}`);
      const list = res.body.payload.list as { id: string; type: string }[];
      const ids = list.filter((m) => m.type === "C2C" || m.type === "C2G").map((m) => m.id);
      for (const id of ids) this.ledger.received(this.me, id);
      if (list.length) {
        const ack = await rest(base, "POST", "/api/v1/msg/offline_ack", { token: this.me.token, body: { did: this.me.deviceId, msg_ids: list.map((m) => m.id) } });
        if (ack.body?.code !== 0) throw new Error(`msg/offline_ack: ${JSON.stringify(ack.body)}`);
      }
      if (!res.body.payload.has_more) return;
    }
  }

  close(): Promise<unknown> {
    return this.conn.close();
  }
}

/** Steady load: each tick every sender sends one message to a random peer or group it belongs to. */
export function startLoad(
  senders: readonly LedgerClient[],
  pick: (from: LedgerClient) => { type: "C2C" | "C2G"; to: bigint; recipients: readonly Device[] },
  perSecond: number,
): { stop(): void; sent(): number } {
  let sent = 0;
  const timer = setInterval(() => {
    for (const s of senders) {
      const t = pick(s);
      if (s.send(t.type, t.to, t.recipients)) sent++;
    }
  }, Math.max(5, Math.round(1000 / perSecond)));
  return { stop: () => clearInterval(timer), sent: () => sent };
}
