/**
 * The one bus suite: every Bus implementation must pass it
 * (memory.test.ts, redis-streams.test.ts).
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { Bus, BusEntry, DeliverEntry } from "../../src/bus/bus.ts";
import { decodeBusMessage, encodeBusMessage } from "../../src/bus/message.ts";
import type { ImMessage } from "../../src/delivery/ports.ts";
import { Collector } from "./collector.ts";

export interface BusFixture {
  /** A bus for `nodeId` on the shared medium, not started. */
  bus(nodeId: number): Promise<Bus>;
  /** Closes every bus it made and removes what they left behind. */
  dispose(): Promise<void>;
}

const BIG = 7_300_000_000_000_000_123n; // beyond 2^53: must survive exactly

function message(n: number): ImMessage {
  return {
    id: `C2C.${BIG + BigInt(n)}.1700000000000.ab${n}`,
    type: "C2C",
    from: BIG,
    to: BIG + 1n,
    payload: { text: `hello ${n}`, ref: BIG },
    payloadJson: `{"text":"hello ${n}","ref":${BIG}}`,
    msg_type: "text",
    server_ts: 1_700_000_000_000 + n,
  };
}

export function runBusSuite(name: string, make: () => Promise<BusFixture>): void {
  describe(`bus [${name}]`, () => {
    let fx: BusFixture;
    beforeEach(async () => {
      fx = await make();
    });
    afterEach(() => fx.dispose());

    async function started(nodeId: number): Promise<{ bus: Bus; got: Collector }> {
      const bus = await fx.bus(nodeId);
      const got = new Collector();
      await bus.start(got.handler);
      return { bus, got };
    }

    test("a deliver entry reaches the target node once, targets and bytes intact", async () => {
      const a = await started(1);
      const b = await started(2);
      const bytes = encodeBusMessage(message(1));
      const entry: DeliverEntry = {
        kind: "deliver",
        targets: [{ userId: BIG + 1n }, { userId: BIG + 2n, deviceId: "dev-é,\"1" }],
        message: bytes,
      };
      a.bus.send(2, entry);
      await b.got.waitFor(1);
      await a.bus.flush();
      expect(a.got.got).toHaveLength(0);
      const [{ entry: e, from }] = b.got.got as [{ entry: DeliverEntry; from: number }];
      expect(from).toBe(1);
      expect(e.kind).toBe("deliver");
      expect(e.targets).toEqual(entry.targets);
      expect(Buffer.from(e.message).equals(Buffer.from(bytes))).toBe(true);
      const msg = decodeBusMessage(e.message);
      expect(msg.from).toBe(BIG);
      expect(msg.to).toBe(BIG + 1n);
      expect(msg.payloadJson).toBe(`{"text":"hello 1","ref":${BIG}}`);
      expect(msg.payload).toEqual({ text: "hello 1", ref: BIG });
    });

    test("an entry for this node is handed off locally", async () => {
      const a = await started(1);
      a.bus.send(1, { kind: "ack", userId: BIG, deviceId: "d", msgId: "C2C.1.2.x", type: "C2C" });
      await a.got.waitFor(1);
      expect(a.got.got[0]).toEqual({ entry: { kind: "ack", userId: BIG, deviceId: "d", msgId: "C2C.1.2.x", type: "C2C" }, from: 1 });
    });

    test("kick and ack entries cross intact", async () => {
      const a = await started(1);
      const b = await started(2);
      const kick: BusEntry = { kind: "kick", userId: BIG, deviceId: "phone", action: "logged_another_device", at: 1_700_000_000_123 };
      const ack: BusEntry = { kind: "ack", userId: BIG, deviceId: "phone", msgId: `S2C.${BIG}.1.r`, type: "S2C" };
      b.bus.send(1, kick);
      b.bus.send(1, ack);
      await a.got.waitFor(2);
      expect(a.got.got).toEqual([
        { entry: kick, from: 2 },
        { entry: ack, from: 2 },
      ]);
    });

    test("pull and invalidate entries cross intact", async () => {
      const a = await started(1);
      const b = await started(2);
      const sent: BusEntry[] = [
        { kind: "pull", userIds: [BIG, BIG + 1n] },
        { kind: "pull" },
        { kind: "invalidate", change: { kind: "pair", a: BIG, b: BIG + 2n } },
        { kind: "invalidate", change: { kind: "group", groupId: BIG + 3n } },
        { kind: "invalidate", change: { kind: "user", userId: BIG + 4n } },
      ];
      for (const e of sent) b.bus.send(1, e);
      await a.got.waitFor(sent.length);
      expect(a.got.got).toEqual(sent.map((entry) => ({ entry, from: 2 })));
    });

    test("channel entries cross intact: payload text byte for byte, user lists exact", async () => {
      const a = await started(1);
      const b = await started(2);
      const sent: BusEntry[] = [
        { kind: "channel", channelId: BIG, action: "channel_unread_count", subscribers: 100_000 },
        { kind: "channel", channelId: BIG + 1n, action: "channel_unread_count", userIds: [BIG + 2n] },
        {
          kind: "channel",
          channelId: BIG + 3n,
          action: "channel_message_edited",
          payload: `{"channel_id":${BIG + 3n},"content":"é \\n 你好","edited_at":"2026-11-25T07:57:35.123456Z"}`,
        },
      ];
      for (const e of sent) a.bus.send(2, e);
      await b.got.waitFor(sent.length);
      expect(b.got.got).toEqual(sent.map((entry) => ({ entry, from: 1 })));
    });

    test("sessions entries cross intact, with and without their optional selectors", async () => {
      const a = await started(1);
      const b = await started(2);
      const sent: BusEntry[] = [
        {
          kind: "sessions",
          userId: BIG,
          sessionDeviceId: "phone,1 é",
          belowGen: 7,
          action: "device_force_offline",
          payload: '{"reason":"signed_out","user_id":' + BIG + "}",
          close: { code: 4104, reason: "signed_out" },
        },
        { kind: "sessions", deviceType: "ios", action: "app_upgrade", payload: '{"min_version":"2.0"}' },
      ];
      for (const e of sent) b.bus.send(1, e);
      await a.got.waitFor(sent.length);
      expect(a.got.got).toEqual(sent.map((entry) => ({ entry, from: 2 })));
    });

    test("entries from one node arrive in the order sent", async () => {
      const a = await started(1);
      const b = await started(2);
      for (let i = 0; i < 300; i++) a.bus.send(2, { kind: "deliver", targets: [{ userId: BigInt(i) }], message: encodeBusMessage(message(i)) });
      await b.got.waitFor(300);
      expect(b.got.got.map((g) => (g.entry as DeliverEntry).targets[0]!.userId)).toEqual(
        Array.from({ length: 300 }, (_, i) => BigInt(i)),
      );
    });

    test("fan-out to three nodes: one entry per node, same bytes", async () => {
      const a = await started(1);
      const b = await started(2);
      const c = await started(3);
      const bytes = encodeBusMessage(message(7));
      for (const [node, users] of [[2, [10n, 11n, 12n]], [3, [20n]]] as const) {
        a.bus.send(node, { kind: "deliver", targets: users.map((userId) => ({ userId })), message: bytes });
      }
      await b.got.waitFor(1);
      await c.got.waitFor(1);
      await a.bus.flush();
      expect(b.got.got).toHaveLength(1);
      expect(c.got.got).toHaveLength(1);
      expect((b.got.got[0]!.entry as DeliverEntry).targets).toHaveLength(3);
      expect(decodeBusMessage((c.got.got[0]!.entry as DeliverEntry).message).id).toBe(message(7).id);
    });

    test("entries sent before the target starts wait for it", async () => {
      const a = await started(1);
      const late = await fx.bus(2);
      a.bus.send(2, { kind: "kick", userId: 5n, deviceId: "x", action: "device_force_offline", at: 1 });
      await a.bus.flush();
      const got = new Collector();
      await late.start(got.handler);
      await got.waitFor(1);
      expect(got.got[0]!.entry).toMatchObject({ kind: "kick", userId: 5n });
    });

    test("close flushes what was queued", async () => {
      const a = await started(1);
      const b = await started(2);
      a.bus.send(2, { kind: "ack", userId: 1n, deviceId: "d", msgId: "1", type: "C2C" });
      await a.bus.close();
      await b.got.waitFor(1);
      expect(b.got.got).toHaveLength(1);
    });

    test("a handler that throws on one entry does not stop the next ones", async () => {
      const a = await started(1);
      const bus = await fx.bus(2);
      const seen: string[] = [];
      let resolve!: () => void;
      const done = new Promise<void>((r) => (resolve = r));
      await bus.start((entry) => {
        if (entry.kind !== "ack") return;
        seen.push(entry.msgId);
        if (entry.msgId === "bad") throw new Error("boom");
        if (entry.msgId === "last") resolve();
      });
      for (const msgId of ["bad", "ok", "last"]) a.bus.send(2, { kind: "ack", userId: 1n, deviceId: "d", msgId, type: "C2C" });
      await done;
      expect(seen).toEqual(["bad", "ok", "last"]);
    });

    test("ready while the medium answers", async () => {
      const a = await started(1);
      expect(a.bus.ready()).toBe(true);
    });
  });
}
