import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { userDevices, users } from "../../src/db/schema/index.ts";
import type { Delivery } from "../../src/delivery/index.ts";
import { stringifyJson } from "../../src/protocol/json.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";
import { holdDeviceCheck, joinGroup, TestSessions, TestSocial, uplink, type TestSession } from "./harness.ts";

const ALICE = 300000000000000001n;
const BOB = 300000000000000002n;
const CAROL = 300000000000000003n;
const GROUP = 400000000000000001n;

for (const kind of storeKinds()) {
  describe(`/api/v1/msg [${kind}]`, () => {
    let node: TestNode;
    let delivery: Delivery;
    const sessions = new TestSessions();
    const social = new TestSocial().befriend(ALICE, BOB).befriend(ALICE, CAROL);
    const tokens = new Map<string, string>();
    const token = async (user: bigint, device: string) => {
      const key = `${user}/${device}`;
      if (!tokens.has(key)) tokens.set(key, (await node.services.tokens.pair(user, device)).token);
      return tokens.get(key)!;
    };
    const sendAll = async (from: bigint, device: string, list: Record<string, unknown>[]) => {
      const s = sessions.session(from, device) ?? sessions.open(from, device);
      for (const m of list) delivery.engine.onMessage(s, m);
      await delivery.flush();
      return list.map((m) => m.id as string);
    };

    beforeAll(async () => {
      node = await startTestNode(kind, {}, { delivery: { sessions, social } });
      delivery = node.services.delivery!;
      sessions.delivery = delivery;
      await joinGroup(node.services.store, social, GROUP, [ALICE, BOB]);
      // Tokens are honoured only for existing accounts.
      await node.services.store.db
        .insert(users)
        .values([ALICE, BOB, CAROL].map((id) => ({ id, account: `u${id}`, passwordHash: "x" })));
    });
    afterAll(() => node.stop());

    test("a token is required", async () => {
      const res = await api(node, "GET", "/api/v1/msg/offline");
      expect(res.status).toBe(401);
    });

    test("offline pull pages the exact unacked set oldest first; offline_ack answers in the batch shape", async () => {
      const bob = await token(BOB, "b1");
      const first = await api(node, "GET", "/api/v1/msg/offline", { token: bob });
      expect(first.body).toMatchObject({ code: 0, payload: { list: [], has_more: false } });

      const ids = await sendAll(ALICE, "a1", [
        uplink("C2C", ALICE, BOB),
        uplink("C2C", ALICE, BOB, { payload: { text: "big", uid: 300000000000000009n } }),
        uplink("C2C", ALICE, BOB),
      ]);
      const page = await api(node, "GET", "/api/v1/msg/offline?limit=2", { token: bob });
      expect(page.status).toBe(200);
      expect(page.body.payload.has_more).toBe(true);
      expect(page.body.payload.list.map((m: { id: string }) => m.id)).toEqual(ids.slice(0, 2));
      const second = page.body.payload.list[1];
      expect(second).toMatchObject({ type: "C2C", from: ALICE, to: BOB, msg_type: "text", payload: { text: "big", uid: 300000000000000009n } });
      expect(page.text).toContain('"uid":300000000000000009');

      const ack = await api(node, "POST", "/api/v1/msg/offline_ack", { token: bob, body: { msg_ids: [ids[0], ids[1], "C2C.1.1.unknown"] } });
      expect(ack.body).toMatchObject({
        code: 0,
        payload: { success: [ids[0], ids[1]], failed: [{ id: "C2C.1.1.unknown", error: "not found" }] },
      });
      await delivery.notifier.notify([BOB], "apply_friend", { from_id: CAROL });
      const rest = await api(node, "GET", "/api/v1/msg/offline", { token: bob });
      expect(rest.body.payload).toMatchObject({ has_more: false });
      const list = rest.body.payload.list;
      expect(list.map((m: { id: string }) => m.id).slice(0, 1)).toEqual([ids[2]]);
      expect(list[1]).toMatchObject({ type: "S2C", from: "", to: BOB, action: "apply_friend", msg_type: "", payload: { from_id: CAROL } });
      expect(list).toHaveLength(2);
      // Alice's sending device has nothing pending.
      const alice = await api(node, "GET", "/api/v1/msg/offline", { token: await token(ALICE, "a1") });
      expect(alice.body.payload.list).toEqual([]);
    });

    test("offline_ack cancels the device's live retry on this node", async () => {
      const b1 = sessions.open(BOB, "b-live");
      await delivery.flush();
      const [id] = await sendAll(ALICE, "a1", [uplink("C2C", ALICE, BOB)]);
      expect(delivery.core.wheel.find(BOB, "b-live", id!)).toBeDefined();
      const ack = await api(node, "POST", "/api/v1/msg/offline_ack", { token: await token(BOB, "b-live"), body: { msg_ids: [id] } });
      expect(ack.body.payload).toMatchObject({ success: [id], failed: [] });
      expect(delivery.core.wheel.find(BOB, "b-live", id!)).toBeUndefined();
      sessions.close(b1);
    });

    test("a pull racing its device's connect check does not record a later floor: what the connection was pushed is pending", async () => {
      // Hold the connect's check (status, floor, pending) until the pull has answered, as a busy store may.
      const check = holdDeviceCheck(delivery.inbox, "b-race");
      try {
        const b = sessions.open(BOB, "b-race");
        // Not sendAll: its flush would wait for the held check. The SERVER_ACK says the message is stored.
        const a = (sessions.session(ALICE, "a1") as TestSession | undefined) ?? sessions.open(ALICE, "a1");
        const m = uplink("C2C", ALICE, BOB);
        const id = m.id as string;
        delivery.engine.onMessage(a, m);
        const shown = (list: readonly unknown[]) => list.some((o) => stringifyJson(o).includes(id));
        for (let i = 0; i < 400 && !(shown(a.sent) && shown(b.sent)); i++) await Bun.sleep(5);
        expect(shown(b.sent)).toBe(true);
        expect(check.held).toBe(true);
        const pull = await api(node, "GET", "/api/v1/msg/offline", { token: await token(BOB, "b-race") });
        expect(pull.body.payload.list.map((m: { id: string }) => m.id)).toContain(id);
        check.release();
        await delivery.flush();
        const again = await api(node, "GET", "/api/v1/msg/offline", { token: await token(BOB, "b-race") });
        expect(again.body.payload.list.map((m: { id: string }) => m.id)).toContain(id);
        sessions.close(b);
      } finally {
        check.restore();
      }
    });

    test("did names another device only when it is one of the caller's active devices", async () => {
      const bob = await token(BOB, "b1");
      const stranger = await api(node, "GET", "/api/v1/msg/offline?did=someone-elses", { token: bob });
      expect(stranger.status).toBe(403);
      await node.services.store.db.insert(userDevices).values([
        { userId: BOB, deviceId: "b2", createdAt: node.services.now() - 60_000 },
        { userId: BOB, deviceId: "b3", status: -1 },
      ]);
      const ok = await api(node, "GET", "/api/v1/msg/offline?did=b2", { token: bob });
      expect(ok.status).toBe(200);
      // Registered a minute ago: it sees what was stored since (the earlier test's messages), not older history.
      expect(ok.body.payload.list.length).toBeGreaterThan(0);
      const gone = await api(node, "POST", "/api/v1/msg/offline_ack", { token: bob, body: { did: "b3", msg_ids: ["C2C.1.1.a"] } });
      expect(gone.status).toBe(403);
      const bad = await api(node, "POST", "/api/v1/msg/offline_ack", { token: bob, body: { msg_ids: [] } });
      expect(bad.status).toBe(400);
    });

    test("history pages newest first with before_id, only for the caller's conversations", async () => {
      const ids = await sendAll(ALICE, "a1", Array.from({ length: 5 }, () => uplink("C2C", ALICE, CAROL)));
      const carol = await token(CAROL, "c1");
      const seen: string[] = [];
      let before: string | undefined;
      for (;;) {
        const q: string = `/api/v1/msg/history?chat_type=c2c&peer_id=${ALICE}&limit=2${before ? `&before_id=${before}` : ""}`;
        const res = await api(node, "GET", q, { token: carol });
        expect(res.status).toBe(200);
        const list = res.body.payload.list as { id: string }[];
        seen.push(...list.map((m) => m.id));
        if (!res.body.payload.has_more) break;
        before = list[list.length - 1]!.id;
      }
      expect(seen).toEqual([...ids].reverse());
      // Bob asking about Alice sees his own conversation with her, never Alice–Carol.
      const bob = await api(node, "GET", `/api/v1/msg/history?chat_type=c2c&peer_id=${ALICE}&limit=100`, { token: await token(BOB, "b1") });
      expect(bob.body.payload.list.some((m: { id: string }) => ids.includes(m.id))).toBe(false);
      const foreign = await api(node, "GET", `/api/v1/msg/history?chat_type=c2c&peer_id=${ALICE}&before_id=${ids[0]}`, { token: await token(BOB, "b1") });
      expect(foreign.status).toBe(400);
    });

    test("group history needs membership", async () => {
      const ids = await sendAll(ALICE, "a1", [uplink("C2G", ALICE, GROUP), uplink("C2G", ALICE, GROUP)]);
      const bob = await api(node, "GET", `/api/v1/msg/history?chat_type=C2G&peer_id=${GROUP}`, { token: await token(BOB, "b1") });
      expect(bob.body.payload.list.map((m: { id: string }) => m.id)).toEqual([...ids].reverse());
      const carol = await api(node, "GET", `/api/v1/msg/history?chat_type=c2g&peer_id=${GROUP}`, { token: await token(CAROL, "c1") });
      expect(carol.body.code).toBe(943);
      const none = await api(node, "GET", `/api/v1/msg/history?chat_type=c2g&peer_id=1`, { token: await token(CAROL, "c1") });
      expect(none.body.code).toBe(404);
      const badType = await api(node, "GET", `/api/v1/msg/history?chat_type=c2s&peer_id=${GROUP}`, { token: await token(BOB, "b1") });
      expect(badType.status).toBe(400);
    });

    test("read sync reaches the reader's other devices only", async () => {
      const b1 = sessions.open(BOB, "b1");
      const b2 = sessions.open(BOB, "b2");
      await delivery.flush();
      const res = await api(node, "POST", "/api/v1/msg/read", { token: await token(BOB, "b1"), body: { peer_id: ALICE, msg_id: "C2C.5.6.abc" } });
      expect(res.body).toMatchObject({ code: 0 });
      expect(b1.msgs({ action: "message_read_sync" })).toHaveLength(0);
      expect(b2.msgs({ action: "message_read_sync" }).map((m) => m.payload)).toEqual([{ user_id: BOB, peer_id: ALICE, msg_id: "C2C.5.6.abc" }]);
      const bad = await api(node, "POST", "/api/v1/msg/read", { token: await token(BOB, "b1"), body: { peer_id: ALICE, msg_id: "nope" } });
      expect(bad.status).toBe(400);
    });
  });
}

for (const kind of storeKinds()) {
  describe(`/api/v1/msg pages have a byte budget [${kind}]`, () => {
    test("history and offline stop at IBIS_PAGE_MAX_BYTES (has_more), a larger message comes alone, nothing is skipped", async () => {
      const sessions = new TestSessions();
      const social = new TestSocial().befriend(ALICE, CAROL);
      const node = await startTestNode(kind, { pageMaxBytes: 4096 }, { delivery: { sessions, social } });
      const delivery = node.services.delivery!;
      sessions.delivery = delivery;
      await node.services.store.db.insert(users).values([ALICE, CAROL].map((id) => ({ id, account: `u${id}`, passwordHash: "x" })));
      const carol = (await node.services.tokens.pair(CAROL, "c1")).token;
      await api(node, "GET", "/api/v1/msg/offline", { token: carol }); // c1 seen before the messages: they are pending for it
      const sizes = [1500, 1500, 1500, 9000, 1500];
      const s = sessions.open(ALICE, "a1");
      const sent = sizes.map((n) => uplink("C2C", ALICE, CAROL, { payload: { text: "x".repeat(n) } }));
      for (const m of sent) delivery.engine.onMessage(s, m);
      await delivery.flush();
      const [i0, i1, i2, i3, i4] = sent.map((m) => m.id as string) as [string, string, string, string, string];
      const pages: string[][] = [];
      let before: string | undefined;
      for (;;) {
        const q = `/api/v1/msg/history?chat_type=c2c&peer_id=${ALICE}&limit=100${before ? `&before_id=${before}` : ""}`;
        const res = await api(node, "GET", q, { token: carol });
        const list = res.body.payload.list as { id: string }[];
        pages.push(list.map((m) => m.id));
        if (!res.body.payload.has_more) break;
        before = list.at(-1)!.id;
      }
      // Newest first: [1500] then the 9000 alone, then 1500+1500 (4096 budget), then the first.
      expect(pages).toEqual([[i4], [i3], [i2, i1], [i0]]);
      const pulls: string[][] = [];
      for (;;) {
        const res = await api(node, "GET", "/api/v1/msg/offline?limit=100", { token: carol });
        const list = (res.body.payload.list as { id: string }[]).map((m) => m.id);
        pulls.push(list);
        if (!res.body.payload.has_more) break;
        await api(node, "POST", "/api/v1/msg/offline_ack", { token: carol, body: { msg_ids: list } });
      }
      // Oldest first: 1500+1500 (+1500 would pass 4096), then 1500 (the 9000 would pass it), the 9000 alone, the last.
      expect(pulls).toEqual([[i0, i1], [i2], [i3], [i4]]);
      await node.stop();
    });
  });
}
