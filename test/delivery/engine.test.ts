import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { and, eq, sql } from "drizzle-orm";
import { deliveryDevices, deliveryMarks, inbox, messages, timeline, userDevices } from "../../src/db/schema/index.ts";
import { openStore, rowsOf } from "../../src/db/store.ts";
import type { ImMessage } from "../../src/delivery/ports.ts";
import { freshPostgresDatabase, freshStore, storeKinds, type TestStore } from "../support/stores.ts";
import { CHECK_RETRY_MS } from "../../src/delivery/engine.ts";
import { DELIVERY_TABLES, deliveryOn, uplink, type Rig, type TestSession } from "./harness.ts";

const ALICE = 300000000000000001n;
const BOB = 300000000000000002n;
const CAROL = 300000000000000003n;
const GROUP = 400000000000000001n;
const BOT = 1000n;


for (const kind of storeKinds()) {
  describe(`delivery engine [${kind}]`, () => {
    let ts: TestStore;
    let rig: Rig;
    beforeAll(async () => {
      ts = await freshStore(kind);
    });
    afterAll(() => ts.dispose());
    beforeEach(async () => {
      await ts.store.db.execute(sql.raw(`truncate ${DELIVERY_TABLES}`));
      rig = deliveryOn(ts.store);
      rig.social.befriend(ALICE, BOB).befriend(ALICE, CAROL);
      await rig.group(GROUP, [ALICE, BOB, CAROL]);
    });
    afterEach(() => rig.delivery.stop());

    const rows = (clientId: string) => ts.store.db.select().from(messages).where(eq(messages.clientId, clientId));
    const send = async (s: TestSession, msg: Record<string, unknown>) => {
      rig.delivery.engine.onMessage(s, msg);
      await rig.settle();
    };
    const only = (s: TestSession, filter: { type?: string; action?: string }): ImMessage => {
      const list = s.msgs(filter);
      expect(list).toHaveLength(1);
      return list[0]!;
    };

    test("C2C reaches every device of the receiver and the sender's other devices, not the sending one", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      const a2 = rig.sessions.open(ALICE, "a2");
      const b1 = rig.sessions.open(BOB, "b1");
      const b2 = rig.sessions.open(BOB, "b2");
      await rig.settle();
      for (const s of [a1, a2, b1, b2]) s.clear();
      const m = uplink("C2C", ALICE, BOB);
      await send(a1, m);

      const ack = only(a1, { type: "C2C_SERVER_ACK" });
      expect(ack).toMatchObject({ id: m.id, in_reply_to: m.id, payloadJson: "{}" });
      expect(a1.msgs({ type: "C2C" })).toHaveLength(0);
      for (const s of [a2, b1, b2]) {
        const got = only(s, { type: "C2C" });
        expect(got).toMatchObject({ id: m.id, from: ALICE, to: BOB, msg_type: "text" });
        expect(got.payloadJson).toBe(JSON.stringify(m.payload));
      }
      // One Outbound for every device: encoded at most once per encoding.
      expect(new Set([a2, b1, b2].map((s) => s.sent.find((o) => o.msg.type === "C2C")))).toHaveProperty("size", 1);
      const [row] = await rows(m.id as string);
      expect(row).toMatchObject({ chatType: "C2C", fromId: ALICE, toId: BOB, msgType: "text" });
      expect(row!.id > 2n ** 53n).toBe(true);
      expect(ack.server_ts).toBe(row!.serverTs);
      // The row alone (docs/delivery.md "C2C"): no inbox rows, no mark; the row names the sending device.
      expect(row!.fromDevice).toBe("a1");
      expect(await ts.store.db.select().from(inbox).where(eq(inbox.messageId, row!.id))).toEqual([]);
      expect(await ts.store.db.select().from(deliveryMarks).where(eq(deliveryMarks.messageId, row!.id))).toEqual([]);
      // Pending for every device that should see it but the sending one.
      const pendingOf = async (user: bigint, device: string) => (await rig.delivery.inbox.pending(user, device, 10)).rows.map((r) => r.clientId);
      expect(await pendingOf(ALICE, "a1")).toEqual([]);
      for (const [user, device] of [[ALICE, "a2"], [BOB, "b1"], [BOB, "b2"]] as const) expect(await pendingOf(user, device)).toEqual([m.id as string]);
    });

    test("C2C without inbox rows: a note to oneself, acks from either side, and what each device still has pending", async () => {
      rig.social.befriend(ALICE, ALICE); // the real graph lets anyone write to themselves
      const [s1, s3] = [rig.sessions.open(ALICE, "a1"), rig.sessions.open(BOB, "b1")];
      for (const d of ["a2", "a3"]) rig.sessions.open(ALICE, d); // seen once: their floors are set
      await rig.settle();
      const note = uplink("C2C", ALICE, ALICE);
      const sent = uplink("C2C", ALICE, BOB);
      const got = uplink("C2C", BOB, ALICE);
      await send(s1, note);
      await send(s1, sent);
      await send(s3, got);
      const pendingOf = async (user: bigint, device: string) => (await rig.delivery.inbox.pending(user, device, 10)).rows.map((r) => r.clientId);
      const hasPending = (user: bigint, device: string) => rig.delivery.inbox.hasPending(user, device);
      // Each message once per device that should see it; the sending device never has its own.
      expect(await pendingOf(ALICE, "a1")).toEqual([got.id as string]);
      for (const d of ["a2", "a3"]) expect(await pendingOf(ALICE, d)).toEqual([note.id, sent.id, got.id] as string[]);
      expect(await pendingOf(BOB, "b1")).toEqual([sent.id as string]);
      // A restarted node (nothing in memory): acks resolve from the store. The note and the sent message acked by a
      // sender's other device, the received one by the receiver.
      await rig.delivery.stop();
      rig = deliveryOn(ts.store);
      const [a1, a2, b1] = [rig.sessions.open(ALICE, "a1"), rig.sessions.open(ALICE, "a2"), rig.sessions.open(BOB, "b1")];
      await rig.settle();
      rig.delivery.engine.onAck(a2, { type: "C2C", msgId: note.id as string, did: "a2" });
      rig.delivery.engine.onAck(a2, { type: "C2C", msgId: (sent.id as string).split(".")[1]!, did: "a2", tsidOnly: true });
      rig.delivery.engine.onAck(a1, { type: "C2C", msgId: got.id as string, did: "a1" });
      rig.delivery.engine.onAck(b1, { type: "C2C", msgId: sent.id as string, did: "b1" });
      await rig.settle();
      for (const [s, n] of [[a1, 1], [a2, 2], [b1, 1]] as const) expect(s.msgs({ type: "CLIENT_ACK_CONFIRM" })).toHaveLength(n);
      expect(await pendingOf(ALICE, "a1")).toEqual([]);
      expect(await pendingOf(ALICE, "a2")).toEqual([got.id as string]);
      expect(await pendingOf(ALICE, "a3")).toEqual([note.id, sent.id, got.id] as string[]);
      expect(await pendingOf(BOB, "b1")).toEqual([]);
      expect([await hasPending(ALICE, "a1"), await hasPending(ALICE, "a3"), await hasPending(BOB, "b1")]).toEqual([false, true, false]);
      // A stranger cannot acknowledge a C2C of others: the store finds nothing they may ack.
      const c1 = rig.sessions.open(CAROL, "c1");
      await rig.settle();
      rig.delivery.engine.onAck(c1, { type: "C2C", msgId: sent.id as string, did: "c1" });
      await rig.settle();
      expect(c1.msgs({ type: "CLIENT_ACK_CONFIRM" })).toHaveLength(0);
      expect(only(c1, { action: "invalid_message" })).toMatchObject({ in_reply_to: sent.id });
      expect(await ts.store.db.select().from(deliveryMarks).where(eq(deliveryMarks.userId, CAROL))).toEqual([]);
    });

    test("C2G reaches every member's devices with one Outbound, then the social graph hears of it", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      const a2 = rig.sessions.open(ALICE, "a2");
      const b1 = rig.sessions.open(BOB, "b1");
      const c1 = rig.sessions.open(CAROL, "c1");
      const c2 = rig.sessions.open(CAROL, "c2");
      await rig.settle();
      const m = uplink("C2G", ALICE, GROUP);
      await send(a1, m);
      only(a1, { type: "C2G_SERVER_ACK" });
      const outs = [a2, b1, c1, c2].map((s) => {
        only(s, { type: "C2G" });
        return s.sent.find((o) => o.msg.type === "C2G");
      });
      expect(new Set(outs).size).toBe(1);
      const [row] = await rows(m.id as string);
      expect(rig.social.afterGroup).toHaveLength(1);
      expect(rig.social.afterGroup[0]).toMatchObject({ groupId: GROUP, serverId: row!.id });
      // One stored row and one timeline entry, whatever the group's size; no inbox rows.
      expect(await ts.store.db.select().from(inbox).where(eq(inbox.messageId, row!.id))).toHaveLength(0);
      expect(await ts.store.db.select().from(timeline).where(eq(timeline.messageId, row!.id))).toEqual([{ messageId: row!.id, convId: GROUP, seq: 1n }]);
    });

    test("SERVER_ACK is sent only once the row is committed", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      await rig.settle();
      const probes: Promise<number>[] = [];
      a1.onSend = (out) => {
        if (out.msg.type.endsWith("_SERVER_ACK")) probes.push(rows(out.msg.id).then((r) => r.length));
      };
      const sent = [uplink("C2C", ALICE, BOB), uplink("C2G", ALICE, GROUP), uplink("C2S", ALICE, BOT)];
      for (const m of sent) rig.delivery.engine.onMessage(a1, m);
      await rig.settle();
      expect(await Promise.all(probes)).toEqual([1, 1, 1]);
      expect(a1.msgs().filter((m) => m.type.endsWith("_SERVER_ACK")).map((m) => m.id)).toEqual(sent.map((m) => m.id as string));
    });

    test("stop() commits what is queued", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      await rig.settle();
      const list = [uplink("C2C", ALICE, BOB), uplink("C2G", ALICE, GROUP)];
      for (const m of list) rig.delivery.engine.onMessage(a1, m);
      await rig.delivery.stop();
      for (const m of list) expect(await rows(m.id as string)).toHaveLength(1);
      expect(a1.msgs().filter((m) => m.type.endsWith("_SERVER_ACK"))).toHaveLength(2);
    });

    test("an encrypted C2C keeps its ciphertext and metadata, and the check is told it is encrypted", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      const b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      const seen: boolean[] = [];
      const check = rig.social.c2c.bind(rig.social);
      rig.social.c2c = (f: bigint, t: bigint, o: { readonly encrypted: boolean }) => {
        seen.push(o.encrypted);
        return check(f, t, o);
      };
      const e2ee = { e2ee: true, e2ee_ver: 1, e2ee_suite: "RSA-OAEP-256+AES-256-GCM", nonce: "AAEC", keys: [{ did: "b1", wrap_alg: "RSA-OAEP-256", ek: "ZWs=" }] };
      const m = uplink("C2C", ALICE, BOB, { payload: "Q2lwaGVy", e2ee });
      await send(a1, m);
      expect(seen).toEqual([true]);
      const got = only(b1, { type: "C2C" });
      expect(got).toMatchObject({ payload: "Q2lwaGVy", payloadJson: '"Q2lwaGVy"', e2ee });
      const [row] = await rows(m.id as string);
      expect(row).toMatchObject({ payload: '"Q2lwaGVy"' });
      expect(JSON.parse(row!.e2ee!)).toEqual(e2ee);
    });

    test("a resent id is acknowledged again, stored and delivered once", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      const b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      const m = uplink("C2C", ALICE, BOB);
      await send(a1, m);
      await send(a1, { ...m });
      // And twice within one batch.
      const m2 = uplink("C2C", ALICE, BOB);
      rig.delivery.engine.onMessage(a1, m2);
      rig.delivery.engine.onMessage(a1, { ...m2 });
      await rig.settle();
      const acks = a1.msgs({ type: "C2C_SERVER_ACK" });
      expect(acks.map((a) => a.id)).toEqual([m.id, m.id, m2.id, m2.id] as string[]);
      expect(acks[0]!.server_ts).toBe(acks[1]!.server_ts);
      expect(await rows(m.id as string)).toHaveLength(1);
      expect(await rows(m2.id as string)).toHaveLength(1);
      expect(b1.msgs({ type: "C2C" }).map((x) => x.id)).toEqual([m.id, m2.id] as string[]);
    });

    test("the same client id from another sender is a different message", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      const c1 = rig.sessions.open(CAROL, "c1");
      await rig.settle();
      const m = uplink("C2C", ALICE, BOB);
      await send(a1, m);
      await send(c1, { ...m, from: CAROL, to: ALICE });
      expect(await rows(m.id as string)).toHaveLength(2);
    });

    test("retry schedules per type on a fake clock, and the last attempt leaves the message pending", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      const b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      const times = (s: TestSession, type: string, start: number, horizon: number) => {
        const seen: number[] = [];
        let last = s.msgs({ type }).length;
        if (last) seen.push(0);
        for (let t = 0; t < horizon; t += 100) {
          rig.advance(100);
          const n = s.msgs({ type }).length;
          if (n > last) seen.push(rig.clock.ms - start);
          last = n;
        }
        return seen;
      };
      let start = rig.clock.ms;
      await send(a1, uplink("C2C", ALICE, BOB));
      expect(times(b1, "C2C", start, 30_000)).toEqual([0, 3000]);

      start = rig.clock.ms;
      await send(a1, uplink("C2G", ALICE, GROUP));
      expect(times(b1, "C2G", start, 30_000)).toEqual([0]);

      // C2S: the echo bot answers the sender's devices.
      start = rig.clock.ms;
      await send(a1, uplink("C2S", ALICE, BOT));
      expect(times(a1, "C2S", start, 30_000)).toEqual([0, 5000, 12000, 23000]);

      start = rig.clock.ms;
      await rig.delivery.notifier.notify([BOB], "app_upgrade", { version: "2" });
      expect(times(b1, "S2C", start, 30_000)).toEqual([0, 1500, 3000, 6000, 11000, 18000]);
      expect(rig.delivery.core.wheel.size).toBe(0);

      // Never acknowledged: all of them stay pending for b1.
      const pending = (await rig.delivery.inbox.pending(BOB, "b1", 100)).rows;
      expect(pending.map((p) => p.chatType)).toEqual(["C2C", "C2G", "S2C"]);
    });

    test("acks in every form cancel the retry, write the mark and are confirmed", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      const b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      const m1 = uplink("C2C", ALICE, BOB);
      const m2 = uplink("C2C", ALICE, BOB);
      await send(a1, m1);
      await send(a1, m2);
      expect(rig.delivery.core.wheel.size).toBe(2);
      // Full id (text / protobuf forms) and the frame ACK's tsid segment.
      rig.delivery.engine.onAck(b1, { type: "C2C", msgId: m1.id as string, did: "b1" });
      const tsid = (m2.id as string).split(".")[1]!;
      rig.delivery.engine.onAck(b1, { type: "C2C", msgId: tsid, did: "b1", tsidOnly: true });
      await rig.settle();
      expect(rig.delivery.core.wheel.size).toBe(0);
      const confirms = b1.msgs({ type: "CLIENT_ACK_CONFIRM" });
      expect(confirms.map((c) => [c.id, c.action, c.in_reply_to])).toEqual([
        [m1.id, "CLIENT_ACK_CONFIRM", m1.id],
        [m2.id, "CLIENT_ACK_CONFIRM", m2.id],
      ] as never);
      rig.advance(10_000);
      expect(b1.msgs({ type: "C2C" })).toHaveLength(2); // no retry after the ack
      // b1's index outlives its last entry while it is connected (no Maps rebuilt per push), and goes with it.
      expect(rig.delivery.core.wheel.devices).toBe(1);
      rig.sessions.close(b1);
      await rig.settle();
      expect(rig.delivery.core.wheel.devices).toBe(0);
      const marks = await ts.store.db.select().from(deliveryMarks).where(and(eq(deliveryMarks.userId, BOB), eq(deliveryMarks.deviceId, "b1")));
      expect(marks).toHaveLength(2);
      expect((await rig.delivery.inbox.pending(BOB, "b1", 10)).rows).toHaveLength(0);
    });

    test("a frame ACK of an S2C names the server id in its tsid segment", async () => {
      const b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      await rig.delivery.notifier.notify([BOB], "apply_friend", { from_id: ALICE });
      const notice = only(b1, { action: "apply_friend" });
      const [row] = await rows(notice.id);
      expect(notice.id.split(".")[1]).toBe(row!.id.toString());
      rig.delivery.engine.onAck(b1, { type: "S2C", msgId: row!.id.toString(), did: "b1", tsidOnly: true });
      await rig.settle();
      expect(only(b1, { type: "CLIENT_ACK_CONFIRM" }).id).toBe(notice.id);
      expect(rig.delivery.core.wheel.size).toBe(0);
    });

    test("an ack after the last retry (from the store) and an ack by tsid of an offline message", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      const b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      const m1 = uplink("C2C", ALICE, BOB);
      await send(a1, m1);
      rig.advance(5000);
      expect(rig.delivery.core.wheel.size).toBe(0);
      rig.delivery.engine.onAck(b1, { type: "C2C", msgId: (m1.id as string).split(".")[1]!, did: "b1", tsidOnly: true });
      await rig.settle();
      expect(only(b1, { type: "CLIENT_ACK_CONFIRM" }).id).toBe(m1.id as string);
      expect((await rig.delivery.inbox.pending(BOB, "b1", 10)).rows).toHaveLength(0);
      // Acks are idempotent: again by full id and again by tsid (frame ACK) are confirmed again, one mark kept.
      rig.delivery.engine.onAck(b1, { type: "C2C", msgId: m1.id as string, did: "b1" });
      await rig.settle();
      rig.delivery.engine.onAck(b1, { type: "C2C", msgId: (m1.id as string).split(".")[1]!, did: "b1", tsidOnly: true });
      await rig.settle();
      // An unknown id (or a tsid of the wrong direction) is refused.
      rig.delivery.engine.onAck(b1, { type: "C2C", msgId: "C2C.5.5.nope", did: "b1" });
      rig.delivery.engine.onAck(b1, { type: "S2C", msgId: (m1.id as string).split(".")[1]!, did: "b1", tsidOnly: true });
      await rig.settle();
      expect(b1.msgs({ type: "CLIENT_ACK_CONFIRM" }).map((c) => c.id)).toEqual([m1.id, m1.id, m1.id] as string[]);
      // Two acks in flight at once: their answers may come in either order.
      expect(b1.msgs({ action: "invalid_message" }).map((x) => x.in_reply_to).sort()).toEqual(["C2C.5.5.nope", (m1.id as string).split(".")[1]!].sort());
      const marks = await ts.store.db.select().from(deliveryMarks).where(and(eq(deliveryMarks.userId, BOB), eq(deliveryMarks.deviceId, "b1")));
      expect(marks).toHaveLength(1);
    });

    test("a push is held among the recent messages only while no retry entry answers for it", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      const b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      const { engine } = rig.delivery;
      // Answered from memory means answered in the same turn (no promise, no database read).
      const confirmedAtOnce = (id: string) => {
        b1.clear();
        engine.onAck(b1, { type: "C2C", msgId: id, did: "b1" });
        expect(b1.msgs({ type: "CLIENT_ACK_CONFIRM" }).map((c) => c.id)).toEqual([id]);
      };
      const m1 = uplink("C2C", ALICE, BOB);
      await send(a1, m1);
      expect(rig.delivery.core.recent.size).toBe(0); // b1's retry entry answers for it
      confirmedAtOnce(m1.id as string);
      // The last attempt made and still no ack: the entry ends, the message is held, a late ack is answered at once.
      const m2 = uplink("C2C", ALICE, BOB);
      await send(a1, m2);
      rig.advance(5000);
      expect(rig.delivery.core.wheel.size).toBe(0);
      expect(rig.delivery.core.recent.size).toBe(1);
      confirmedAtOnce(m2.id as string);
      // A group message has no entry (one push): held at once.
      await send(a1, uplink("C2G", ALICE, GROUP));
      expect(rig.delivery.core.recent.size).toBe(2);
      // A disconnect ends its device's entries: the ack may come after the reconnect.
      const m3 = uplink("C2C", ALICE, BOB);
      await send(a1, m3);
      expect(rig.delivery.core.recent.size).toBe(2);
      rig.sessions.close(b1);
      await rig.settle();
      expect(rig.delivery.core.recent.size).toBe(3);
      expect(rig.delivery.core.recent.byId(BOB, m3.id as string)?.serverId).toBe((await rows(m3.id as string))[0]!.id);
      expect(rig.delivery.core.recent.byId(CAROL, m3.id as string)).toBeUndefined(); // not hers to acknowledge
      await rig.settle();
    });

    test("an ack naming another device is refused and marks nothing", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      const b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      const m = uplink("C2C", ALICE, BOB);
      await send(a1, m);
      rig.delivery.engine.onAck(b1, { type: "C2C", msgId: m.id as string, did: "b2" });
      await rig.settle();
      expect(only(b1, { action: "permission_denied" })).toMatchObject({ in_reply_to: m.id });
      expect(b1.msgs({ type: "CLIENT_ACK_CONFIRM" })).toHaveLength(0);
      expect(rig.delivery.core.wheel.size).toBe(1);
    });

    test("offline: a reconnecting device is told to pull, and the pending set is exactly what it has not acked", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      let b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      expect(b1.msgs({ action: "pull_offline_msg" })).toHaveLength(0);
      const early = uplink("C2C", ALICE, BOB);
      await send(a1, early);
      rig.delivery.engine.onAck(b1, { type: "C2C", msgId: early.id as string, did: "b1" });
      const unacked = uplink("C2C", ALICE, BOB);
      await send(a1, unacked);
      rig.sessions.close(b1);
      await rig.settle();
      expect(rig.delivery.core.wheel.size).toBe(0); // disconnect drops retries
      const whileAway = [uplink("C2C", ALICE, BOB), uplink("C2G", ALICE, GROUP)];
      for (const m of whileAway) await send(a1, m);
      await rig.delivery.notifier.notify([BOB], "apply_friend", { from_id: CAROL });
      // Someone else's conversation never shows up.
      await send(a1, uplink("C2C", ALICE, CAROL));

      b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      only(b1, { action: "pull_offline_msg" });
      const pending = (await rig.delivery.inbox.pending(BOB, "b1", 100)).rows;
      expect(pending.slice(0, 3).map((p) => p.clientId)).toEqual([unacked.id, ...whileAway.map((m) => m.id)] as string[]);
      expect(pending.map((p) => p.chatType)).toEqual(["C2C", "C2C", "C2G", "S2C"]);
      // A's own sending device has nothing pending; a brand-new device of Bob inherits no history.
      expect((await rig.delivery.inbox.pending(ALICE, "a1", 100)).rows).toHaveLength(0);
      const b9 = rig.sessions.open(BOB, "b9");
      await rig.settle();
      expect(b9.msgs({ action: "pull_offline_msg" })).toHaveLength(0);
      expect((await rig.delivery.inbox.pending(BOB, "b9", 100)).rows).toHaveLength(0);
    });

    test("a device retired in user_device (status 0 / -1) gets no pushes", async () => {
      await ts.store.db.delete(userDevices);
      await ts.store.db.insert(userDevices).values([
        { userId: BOB, deviceId: "b-revoked", status: 0 },
        { userId: BOB, deviceId: "b-ok", status: 1 },
      ]);
      const a1 = rig.sessions.open(ALICE, "a1");
      const revoked = rig.sessions.open(BOB, "b-revoked");
      const fine = rig.sessions.open(BOB, "b-ok");
      await rig.settle();
      await send(a1, uplink("C2C", ALICE, BOB));
      expect(revoked.msgs({ type: "C2C" })).toHaveLength(0);
      expect(fine.msgs({ type: "C2C" })).toHaveLength(1);
      await ts.store.db.delete(userDevices);
    });

    test("every refusal: not_a_friend, in_denylist, permission_denied, not_group_member, C2S to a non-bot, invalid_message", async () => {
      const DAVE = 300000000000000004n;
      rig.social.befriend(ALICE, DAVE).deny(DAVE, ALICE);
      const a1 = rig.sessions.open(ALICE, "a1");
      await rig.settle();
      const cases: [Record<string, unknown>, string][] = [
        [uplink("C2C", ALICE, 300000000000000099n), "not_a_friend"],
        [uplink("C2C", ALICE, DAVE), "in_denylist"],
        [uplink("C2C", ALICE, 999n), "permission_denied"],
        [uplink("C2G", ALICE, 400000000000000002n), "invalid_message"], // no such group: not_found
        [uplink("C2S", ALICE, 4242n), "permission_denied"],
        [uplink("C2C", ALICE, BOB, { msg_type: "nope" }), "invalid_message"],
      ];
      await rig.group(400000000000000003n, [BOB]);
      cases.push([uplink("C2G", ALICE, 400000000000000003n), "not_group_member"]);
      for (const [m, action] of cases) {
        a1.clear();
        await send(a1, m);
        const refusal = only(a1, { action });
        expect(refusal.type).toBe("S2C");
        expect(refusal.in_reply_to).toBe(m.id as string);
        expect(typeof (refusal.payload as { content: string }).content).toBe("string");
        expect(a1.msgs().filter((x) => x.type.endsWith("SERVER_ACK"))).toHaveLength(0);
        expect(await rows(m.id as string)).toHaveLength(0);
      }
    });

    test("C2S to the echo bot: stored, acknowledged, answered", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      const a2 = rig.sessions.open(ALICE, "a2");
      await rig.settle();
      const m = uplink("C2S", ALICE, BOT, { payload: { text: "ping", topic_id: 9 } });
      await send(a1, m);
      only(a1, { type: "C2S_SERVER_ACK" });
      for (const s of [a1, a2]) {
        const echo = s.msgs({ type: "C2S" }).find((x) => x.from === BOT)!;
        expect(echo).toMatchObject({ to: ALICE, payload: { text: "ping", topic_id: 9 } });
      }
      expect(a2.msgs({ type: "C2S" }).some((x) => x.id === m.id)).toBe(true); // sender's other device
    });

    test("notify stores per user and skips the excepted device; tell is not stored", async () => {
      const b1 = rig.sessions.open(BOB, "b1");
      const b2 = rig.sessions.open(BOB, "b2");
      await rig.settle();
      await rig.delivery.notifier.notify([BOB, CAROL], "message_read_sync", { peer_id: ALICE }, { exceptDevice: { userId: BOB, deviceId: "b1" } });
      expect(b1.msgs({ type: "S2C" })).toHaveLength(0);
      const got = only(b2, { action: "message_read_sync" });
      expect(got).toMatchObject({ from: null, to: BOB, msg_type: "" });
      expect(got.id).toMatch(/^S2C\.\d+\.\d+\.[0-9A-Za-z]+$/);
      expect((await rig.delivery.inbox.pending(BOB, "b1", 10)).rows).toHaveLength(0);
      expect((await rig.delivery.inbox.pending(BOB, "b2", 10)).rows).toHaveLength(1);
      rig.delivery.notifier.tell(b1, "app_upgrade", {});
      expect((await ts.store.db.select().from(messages)).length).toBe(2);
    });

    test("presence: online on the first device, offline after the last", async () => {
      rig.social.presence = true;
      const b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      const a1 = rig.sessions.open(ALICE, "a1");
      await rig.settle();
      const a2 = rig.sessions.open(ALICE, "a2");
      await rig.settle();
      expect(b1.msgs({ action: "online" }).map((m) => m.payload)).toEqual([{ user_id: ALICE, uid: ALICE }]);
      rig.sessions.close(a1);
      await rig.settle();
      expect(b1.msgs({ action: "offline" })).toHaveLength(0);
      rig.sessions.close(a2);
      await rig.settle();
      expect(b1.msgs({ action: "offline" })).toHaveLength(1);
      expect(a2.msgs({ action: "online" })).toHaveLength(0);
      // Through the S2C path: retried until acknowledged, and stored for a friend who was away (Carol).
      rig.advance(1500);
      expect(b1.msgs({ action: "offline" })).toHaveLength(2);
      // c1 is seen once (its floor is set), then away while Alice comes and goes.
      const c1 = rig.sessions.open(CAROL, "c1");
      await rig.settle();
      rig.sessions.close(c1);
      await rig.settle();
      const a3 = rig.sessions.open(ALICE, "a3");
      await rig.settle();
      rig.sessions.close(a3);
      await rig.settle();
      const pending = (await rig.delivery.inbox.pending(CAROL, "c1", 10)).rows;
      expect(pending.map((p) => [p.chatType, p.action, p.toId])).toEqual([
        ["S2C", "online", CAROL],
        ["S2C", "offline", CAROL],
      ] as never);
    });

    test("presence: a connection closed before its device check answered is announced neither online nor offline", async () => {
      rig.social.presence = true;
      const b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      // Opened and closed in one turn: the check's statement answers after the close.
      const a1 = rig.sessions.open(ALICE, "a1");
      rig.sessions.close(a1);
      await rig.settle();
      expect(b1.msgs({ type: "S2C" })).toHaveLength(0); // never online, so no offline either
      // The next connect is announced as usual.
      rig.sessions.open(ALICE, "a2");
      await rig.settle();
      expect(b1.msgs({ type: "S2C" }).map((m) => m.action)).toEqual(["online"]);
    });

    test("presence: two devices connecting together are announced online once", async () => {
      rig.social.presence = true;
      const b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      const a1 = rig.sessions.open(ALICE, "a1");
      const a2 = rig.sessions.open(ALICE, "a2");
      await rig.settle();
      expect(b1.msgs({ type: "S2C" }).map((m) => m.action)).toEqual(["online"]);
      rig.sessions.close(a1);
      rig.sessions.close(a2);
      await rig.settle();
      expect(b1.msgs({ type: "S2C" }).map((m) => m.action)).toEqual(["online", "offline"]);
    });

    test("a device check that fails (the store down) is asked again for the connections still open", async () => {
      rig.social.presence = true;
      const a1 = rig.sessions.open(ALICE, "a1");
      let b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      rig.sessions.close(b1);
      await rig.settle();
      const whileAway = uplink("C2C", ALICE, BOB);
      await send(a1, whileAway);
      a1.clear();

      const inbox = rig.delivery.inbox;
      const real = inbox.openDevices.bind(inbox);
      const asked: string[][] = [];
      let down = true;
      inbox.openDevices = async (reqs) => {
        asked.push(reqs.map((r) => r.deviceId));
        if (down) throw new Error("store down");
        return real(reqs);
      };
      try {
        b1 = rig.sessions.open(BOB, "b1");
        const gone = rig.sessions.open(CAROL, "c1");
        await rig.settle();
        expect(asked).toEqual([["b1", "c1"]]);
        rig.sessions.close(gone);
        await rig.settle();
        expect(b1.msgs({ action: "pull_offline_msg" })).toHaveLength(0);
        expect(a1.msgs({ action: "online" })).toHaveLength(0);

        // Still down at the first retry: asked again a second later.
        await Bun.sleep(CHECK_RETRY_MS + 100);
        await rig.settle();
        expect(asked).toEqual([["b1", "c1"], ["b1"]]);
        down = false;
        await Bun.sleep(CHECK_RETRY_MS + 100);
        await rig.settle();
        expect(asked).toEqual([["b1", "c1"], ["b1"], ["b1"]]);
        only(b1, { action: "pull_offline_msg" });
        expect(a1.msgs({ action: "online" }).map((m) => m.payload)).toEqual([{ user_id: BOB, uid: BOB }]);
        const pending = (await rig.delivery.inbox.pending(BOB, "b1", 10)).rows.filter((r) => r.chatType === "C2C");
        expect(pending.map((r) => r.clientId)).toEqual([whileAway.id as string]);
      } finally {
        inbox.openDevices = real;
      }
    });

    test("a connect is told to pull when the check of its acks not yet committed fails", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      let b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      rig.sessions.close(b1);
      await rig.settle();
      await send(a1, uplink("C2C", ALICE, BOB));
      const engine = rig.delivery.core;
      const inbox = rig.delivery.inbox;
      // Acks in the share not yet committed (of another message), then the read that subtracts them fails.
      engine.unconfirmed = async () => [{ userId: BOB, deviceId: "b1", messageId: 1n }];
      inbox.hasPending = async () => {
        throw new Error("store down");
      };
      b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      only(b1, { action: "pull_offline_msg" });
    });

    test("a check still failing when the node stops is not asked again", async () => {
      const inbox = rig.delivery.inbox;
      let calls = 0;
      inbox.openDevices = async () => {
        calls++;
        throw new Error("store down");
      };
      rig.sessions.open(BOB, "b1");
      await rig.settle();
      expect(calls).toBe(1);
      await rig.delivery.stop();
      await Bun.sleep(CHECK_RETRY_MS + 100);
      expect(calls).toBe(1);
    });

    for (const later of ["checked at once", "checked slowly too"] as const) {
      test(`messages keep their order per connection when the first one's check is slow (the later ones ${later})`, async () => {
        const a1 = rig.sessions.open(ALICE, "a1");
        const b1 = rig.sessions.open(BOB, "b1");
        await rig.settle();
        const check = rig.social.c2c.bind(rig.social);
        let n = 0;
        // The first uplink's check is not at hand and takes 20 ms; the later ones' are at hand (or not) and quick.
        rig.social.checkC2CNow = (f, t, o) => (n === 0 || later === "checked slowly too" ? undefined : check(f, t, o));
        rig.social.checkC2C = async (f, t, o) => {
          if (n++ === 0) await new Promise((r) => setTimeout(r, 20));
          return check(f, t, o);
        };
        const list = [uplink("C2C", ALICE, BOB), uplink("C2C", ALICE, BOB), uplink("C2C", ALICE, BOB)];
        for (const m of list) rig.delivery.engine.onMessage(a1, m);
        await rig.settle();
        expect(b1.msgs({ type: "C2C" }).map((m) => m.id)).toEqual(list.map((m) => m.id as string));
        expect(a1.msgs().filter((m) => m.type === "C2C_SERVER_ACK").map((m) => m.id)).toEqual(list.map((m) => m.id as string));
      });
    }

    test("compaction moves floors up to the oldest unacked message and drops the marks below", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      const b1 = rig.sessions.open(BOB, "b1");
      const b2 = rig.sessions.open(BOB, "b2");
      await rig.settle();
      const list = [uplink("C2C", ALICE, BOB), uplink("C2C", ALICE, BOB), uplink("C2C", ALICE, BOB)];
      for (const m of list) await send(a1, m);
      for (const m of list) rig.delivery.engine.onAck(b1, { type: "C2C", msgId: m.id as string, did: "b1" });
      rig.delivery.engine.onAck(b2, { type: "C2C", msgId: list[0]!.id as string, did: "b2" });
      await rig.settle();
      rig.clock.advance(11 * 60_000);
      await rig.delivery.prune();
      const marks = await ts.store.db.select().from(deliveryMarks).where(eq(deliveryMarks.userId, BOB));
      expect(marks).toEqual([]); // b2 is floored at list[1], its mark of list[0] is below
      expect((await rig.delivery.inbox.pending(BOB, "b1", 10)).rows).toHaveLength(0);
      expect(((await rig.delivery.inbox.pending(BOB, "b2", 10)).rows).map((r) => r.clientId)).toEqual([list[1]!.id, list[2]!.id] as string[]);
      // A message stored after compaction is pending as usual.
      const late = uplink("C2C", ALICE, BOB);
      await send(a1, late);
      expect(((await rig.delivery.inbox.pending(BOB, "b1", 10)).rows).map((r) => r.clientId)).toEqual([late.id as string]);
    });

    test("compaction keeps a device's unacknowledged group entries pending (the floor bounds timelines too)", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      let b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      rig.sessions.close(b1);
      await rig.settle();
      const pendingOfB1 = async () => (await rig.delivery.inbox.pending(BOB, "b1", 10)).rows.map((r) => r.clientId);
      // The group entry alone (the floor would move to the settled bound), then behind an unacked C2C (to the C2C).
      const group = uplink("C2G", ALICE, GROUP);
      await send(a1, group);
      rig.clock.advance(11 * 60_000);
      await rig.delivery.prune();
      expect(await pendingOfB1()).toEqual([group.id as string]);
      const direct = uplink("C2C", ALICE, BOB);
      await send(a1, direct);
      rig.clock.advance(11 * 60_000);
      await rig.delivery.prune();
      expect(await pendingOfB1()).toEqual([group.id, direct.id] as string[]);
      b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      only(b1, { action: "pull_offline_msg" });
      // Acknowledged, the entry no longer holds the floor: the next compaction moves it up to the C2C.
      rig.delivery.engine.onAck(b1, { type: "C2G", msgId: group.id as string, did: "b1" });
      await rig.settle();
      await rig.delivery.flush();
      await rig.delivery.prune();
      expect(await pendingOfB1()).toEqual([direct.id as string]);
      const [floor] = await ts.store.db.select().from(deliveryDevices).where(and(eq(deliveryDevices.userId, BOB), eq(deliveryDevices.deviceId, "b1")));
      expect(floor!.floorId).toBe((await rows(direct.id as string))[0]!.id);
    });

    test("retention prune removes old messages with their inbox rows and marks", async () => {
      const a1 = rig.sessions.open(ALICE, "a1");
      const b1 = rig.sessions.open(BOB, "b1");
      await rig.settle();
      // Each round: a C2C that b1 acknowledges (a mark) and a notice to BOB (an inbox row).
      const round = async () => {
        const m = uplink("C2C", ALICE, BOB);
        await send(a1, m);
        rig.delivery.engine.onAck(b1, { type: "C2C", msgId: m.id as string, did: "b1" });
        await rig.delivery.notifier.notify([BOB], "app_upgrade", { version: "2" });
        await rig.settle();
        return m;
      };
      const old = await round();
      rig.clock.advance(181 * 86_400_000);
      const fresh = await round();
      expect(await rig.delivery.prune()).toBe(2);
      expect(await rows(old.id as string)).toHaveLength(0);
      expect(await rows(fresh.id as string)).toHaveLength(1);
      expect((await ts.store.db.select().from(inbox)).length).toBe(1);
      expect((await ts.store.db.select().from(deliveryMarks)).map((r) => r.messageId)).toEqual((await rows(fresh.id as string)).map((r) => r.id));
    });
  });
}

describe("store first [postgres]", () => {
  test("no SERVER_ACK while the batch cannot commit; many uplinks share few batches", async () => {
    const ts = await freshStore("postgres");
    const locker = await openStore({ url: ts.url, poolSize: 1, migrate: false });
    try {
      const rig = deliveryOn(ts.store);
      rig.social.befriend(ALICE, BOB);
      const sessions = Array.from({ length: 20 }, (_, i) => rig.sessions.open(ALICE, `a${i}`));
      await rig.settle();
      const before = rig.delivery.core.writerBatches();
      let acks = 0;
      for (const s of sessions) s.onSend = (out) => void (out.msg.type === "C2C_SERVER_ACK" && acks++);
      // Hold the messages table: the group commit blocks inside its statement.
      const held = locker.db.transaction(async (tx) => {
        await tx.execute(sql`lock table messages in access exclusive mode`);
        for (const s of sessions) for (let i = 0; i < 10; i++) rig.delivery.engine.onMessage(s, uplink("C2C", ALICE, BOB));
        // Wait (by condition, not by time) until the writer is blocked on the lock. Inside a transaction
        // pg_stat_activity is read once and kept: the snapshot is cleared each time (else a first read that came
        // before the writer's connection was even open would be the answer forever).
        for (;;) {
          await tx.execute(sql`select pg_stat_clear_snapshot()`);
          const waiting = rowsOf<{ n: bigint | number }>(
            await tx.execute(sql`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`),
          );
          if (Number(waiting[0]!.n) > 0) break;
          await new Promise((r) => setImmediate(r));
        }
        expect(acks).toBe(0);
      });
      await held;
      await rig.settle();
      expect(acks).toBe(200);
      const n = await ts.store.rows<{ n: bigint | number }>(sql`select count(*) as n from messages`);
      expect(Number(n[0]!.n)).toBe(200);
      // Group commit: far fewer transactions than messages.
      expect(rig.delivery.core.writerBatches() - before).toBeLessThan(20);
      await rig.delivery.stop();
    } finally {
      await locker.close();
      await ts.dispose();
    }
  });


  test("stop after the SERVER_ACK, reopen the database: the row is there", async () => {
    const db = await freshPostgresDatabase();
    try {
      const store = await openStore({ url: db.url, poolSize: 2, migrate: false });
      const rig = deliveryOn(store);
      rig.social.befriend(ALICE, BOB);
      const a1 = rig.sessions.open(ALICE, "a1");
      await rig.settle();
      const m = uplink("C2C", ALICE, BOB);
      const acked = new Promise<void>((resolve) => {
        a1.onSend = (out) => out.msg.type === "C2C_SERVER_ACK" && resolve();
      });
      rig.delivery.engine.onMessage(a1, m);
      await acked;
      await rig.delivery.stop();
      await store.close();
      const again = await openStore({ url: db.url, poolSize: 1, migrate: false });
      const found = await again.db.select().from(messages).where(eq(messages.clientId, m.id as string));
      await again.close();
      expect(found).toHaveLength(1);
    } finally {
      await db.drop();
    }
  });
});
