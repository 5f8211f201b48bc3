import { describe, expect, test } from "bun:test";
import type { ClientAck, DeliveryEngine, Session } from "../../src/delivery/ports.ts";
import { createLogger } from "../../src/log.ts";
import { utf8 } from "../../src/protocol/json.ts";
import { messageJson } from "../../src/protocol/message.ts";
import type { Conn } from "../../src/ws/conn.ts";
import { dispatch, type UplinkDeps } from "../../src/ws/dispatch.ts";
import { Proto } from "../../src/ws/negotiate.ts";
import { UserThrottles } from "../../src/ws/throttle.ts";
import { c2c } from "../support/ws.ts";

/**
 * The uplink dispatch alone, called as Bun's `message` callback calls it, on a
 * connection that only records: what is handed to the engine, in which order,
 * and what is answered. Several uplinks given in one turn arrive as a fast
 * client's do while a large one is being scanned.
 */
const MiB = 1 << 20;

function harness(msgMaxBytes: number) {
  const log: string[] = [];
  const told: { action: string; reason: unknown; inReplyTo: string | undefined }[] = [];
  const engine: DeliveryEngine = {
    onOpen() {},
    onClose() {},
    onMessage: (_s: Session, raw: Record<string, unknown>) => void log.push(`message ${String(raw.id)}`),
    onAck: (_s: Session, ack: ClientAck) => void log.push(`ack ${ack.msgId}`),
  };
  const d: UplinkDeps = {
    engine,
    log: createLogger("silent"),
    now: Date.now,
    // Lifted (throttleOff), as the bench runs: the bound on held uplinks must hold without them.
    throttles: new UserThrottles({ messages: { rate: 1, burst: 1 }, bytes: { rate: 1, burst: 1 }, acks: { rate: 1, burst: 1 } }),
    msgMaxBytes,
    throttleOff: true,
    tell: (_c, action, payload, inReplyTo) => void told.push({ action, reason: payload.reason, inReplyTo }),
    refresh() {},
  };
  const conn = { connId: 1, userId: 7n, deviceId: "d", proto: Proto.Protobuf, closing: false, held: undefined, write: () => "sent", writeTransient: () => "sent" };
  const send = (m: ReturnType<typeof c2c>) => dispatch(d, conn as unknown as Conn, utf8(messageJson(m)));
  return { log, told, conn, send };
}

const large = (mib: number) => ({ ...c2c(7n, 8n), payload: { text: "L".repeat(mib * MiB - 200) } });
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe("uplinks behind a large message being scanned", () => {
  test("wait in arrival order, and are handled after it", async () => {
    const h = harness(16 * MiB);
    const [big, s1, s2] = [large(3), c2c(7n, 8n, "one"), c2c(7n, 8n, "two")];
    h.send(big);
    h.send(s1);
    h.send(s2);
    expect(h.log).toEqual([]); // the scan takes a slice a turn; nothing overtakes it
    await turns(8);
    expect(h.log).toEqual([big, s1, s2].map((m) => `message ${m.id}`));
    expect(h.conn.held).toBeUndefined();
  });

  test("past four largest messages held, the next is refused rate_limited at once, naming its id", async () => {
    const h = harness(2 * MiB);
    const first = large(2);
    const held = [large(2), large(2), large(2), large(2)];
    const over = large(1);
    for (const m of [first, ...held, over]) h.send(m);
    expect(h.told).toEqual([{ action: "invalid_message", reason: "rate_limited", inReplyTo: over.id }]);
    await turns(30);
    expect(h.log).toEqual([first, ...held].map((m) => `message ${m.id}`));
  });

  test("a connection closed meanwhile hands nothing more over", async () => {
    const h = harness(16 * MiB);
    h.send(large(3));
    h.send(c2c(7n, 8n));
    h.conn.closing = true;
    await turns(8);
    expect(h.log).toEqual([]);
    expect(h.conn.held).toBeUndefined();
  });
});
