/**
 * Group timelines over real sockets and the real social graph (both stores):
 * offline pull after a cursor, membership spans, acks past a hole, and the two
 * id-reuse attacks on ack resolution (docs/delivery.md "Timelines", "Acks").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { IbisConnection, newMessageId } from "../../src/client/index.ts";
import { timelineCursors } from "../../src/db/schema/index.ts";
import type { ImMessage } from "../../src/delivery/ports.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";
import { createUser, type TestUser } from "../support/ws.ts";
import { ofType } from "./support.ts";

const c2g = (from: bigint, gid: bigint, text: string, id = newMessageId("C2G")): ImMessage =>
  ({ id, type: "C2G", from, to: gid, msg_type: "text", payload: { text }, server_ts: 0 });

for (const kind of storeKinds()) {
  describe(`group timelines over real sockets [${kind}]`, () => {
    let node: TestNode;
    beforeAll(async () => {
      node = await startTestNode(kind, { throttleOff: true, heartbeatInterval: 60_000 });
    });
    afterAll(() => node.stop());

    const open = async (u: TestUser, did = u.deviceId) => {
      const { token } = await node.services.tokens.pair(u.userId, did);
      return IbisConnection.open({ url: node.url, token, deviceId: did, protocols: ["svc.v2"] });
    };
    /** Opens and closes a device: its floor (first sight) is now. */
    const seen = async (u: TestUser) => {
      const c = await open(u);
      await node.services.delivery!.flush();
      await c.close();
    };
    const group = async (owner: TestUser, members: TestUser[]) => {
      const made = await node.social.groups.create(owner.userId, members.map((m) => m.userId), "g");
      if (!made.ok) throw new Error(made.error.msg);
      return made.value.group.group_id as bigint;
    };
    const sendAll = async (conn: IbisConnection, list: ImMessage[]) => {
      for (const m of list) conn.send(m);
      for (const m of list) await conn.nextMessage(ofType("C2G_SERVER_ACK", m.id));
    };
    const offline = async (u: TestUser, limit = 1000) => {
      const res = await api(node, "GET", `/api/v1/msg/offline?limit=${limit}`, { token: u.token });
      expect(res.body.code).toBe(0);
      return { ids: res.body.payload.list.map((x: { id: string }) => x.id) as string[], more: res.body.payload.has_more as boolean };
    };
    const history = (u: TestUser, gid: bigint, extra = "") =>
      api(node, "GET", `/api/v1/msg/history?chat_type=c2g&peer_id=${gid}&limit=100${extra}`, { token: u.token });
    const groupIds = (ids: string[]) => ids.filter((id) => id.startsWith("C2G."));
    const cursor = async (u: TestUser, gid: bigint) => {
      await node.services.delivery!.flush();
      const [row] = await node.services.store.db
        .select()
        .from(timelineCursors)
        .where(and(eq(timelineCursors.userId, u.userId), eq(timelineCursors.deviceId, u.deviceId), eq(timelineCursors.convId, gid)));
      return row && { seq: row.seq, above: row.above };
    };

    test("a device offline during 1,000 group messages pulls exactly the ones after its cursor, in order", async () => {
      const [alice, bob] = [await createUser(node, "a1"), await createUser(node, "b1")];
      const gid = await group(alice, [bob]);
      const a1 = await open(alice);
      let b1 = await open(bob);
      const first = Array.from({ length: 5 }, (_, i) => c2g(alice.userId, gid, `first ${i}`));
      await sendAll(a1, first);
      for (const m of first) {
        await b1.nextMessage(ofType("C2G", m.id));
        b1.ack({ type: "C2G", msgId: m.id }, "frame");
        await b1.nextMessage((x) => x.type === "CLIENT_ACK_CONFIRM" && x.id === m.id);
      }
      await b1.close();
      const away = Array.from({ length: 1000 }, (_, i) => c2g(alice.userId, gid, `away ${i}`));
      await sendAll(a1, away);

      const pulled = await offline(bob);
      expect(pulled.more).toBe(false);
      expect(groupIds(pulled.ids)).toEqual(away.map((m) => m.id));
      expect(await cursor(bob, gid)).toEqual({ seq: 5n, above: [] });
      // The sender's own device has nothing to pull: its cursor took each message as it was stored.
      expect(groupIds((await offline(alice)).ids)).toEqual([]);

      b1 = await open(bob);
      await b1.nextAction("pull_offline_msg");
      const acked = await api(node, "POST", "/api/v1/msg/offline_ack", { token: bob.token, body: { msg_ids: away.map((m) => m.id) } });
      expect(acked.body.payload.failed).toEqual([]);
      expect(groupIds((await offline(bob)).ids)).toEqual([]);
      expect(await cursor(bob, gid)).toEqual({ seq: 1005n, above: [] });
      await a1.close();
      await b1.close();
    }, 120_000);

    test("a member who joined late sees nothing earlier; one who left sees nothing later (history and offline)", async () => {
      const [alice, bob, carol] = [await createUser(node, "a1"), await createUser(node, "b1"), await createUser(node, "c1")];
      await seen(bob);
      await seen(carol); // known before the first message: only the membership keeps the early ones from her
      const gid = await group(alice, [bob]);
      const a1 = await open(alice);
      const [m1, m2] = [c2g(alice.userId, gid, "1"), c2g(alice.userId, gid, "2")];
      await sendAll(a1, [m1, m2]);
      expect((await node.social.groups.join(alice.userId, gid, [carol.userId])).ok).toBe(true);
      // Her conversation list does not preview what was said before she joined either.
      const lastIn = async () => {
        const res = await api(node, "GET", "/api/v1/conversation/mine", { token: carol.token });
        return res.body.payload.find((x: { conversation_id: bigint }) => x.conversation_id === gid)?.last_msg_id;
      };
      expect(await lastIn()).toBeUndefined();
      const m3 = c2g(alice.userId, gid, "3");
      await sendAll(a1, [m3]);
      expect((await node.social.groups.leave(bob.userId, gid)).ok).toBe(true);
      const m4 = c2g(alice.userId, gid, "4");
      await sendAll(a1, [m4]);

      expect(groupIds((await offline(carol)).ids)).toEqual([m3.id, m4.id]);
      expect(await lastIn()).toBe(m4.id);
      const ch = await history(carol, gid);
      expect(ch.body.payload.list.map((x: { id: string }) => x.id)).toEqual([m4.id, m3.id]);
      const before = await history(carol, gid, `&before_id=${m3.id}`);
      expect(before.body.payload).toMatchObject({ list: [], has_more: false });

      expect(groupIds((await offline(bob)).ids)).toEqual([m1.id, m2.id, m3.id]);
      expect((await history(bob, gid)).body.code).toBe(943);
      const ah = await history(alice, gid);
      expect(ah.body.payload.list.map((x: { id: string }) => x.id)).toEqual([m4.id, m3.id, m2.id, m1.id]);
      await a1.close();
    });

    test("acks past a hole: N+2 before N+1 keeps N+1 pending, then the cursor closes the run", async () => {
      const [alice, bob] = [await createUser(node, "a1"), await createUser(node, "b1")];
      const gid = await group(alice, [bob]);
      const a1 = await open(alice);
      const b1 = await open(bob);
      const list = [c2g(alice.userId, gid, "n"), c2g(alice.userId, gid, "n+1"), c2g(alice.userId, gid, "n+2")];
      await sendAll(a1, list);
      for (const m of list) await b1.nextMessage(ofType("C2G", m.id));
      const confirmed = (m: ImMessage) => b1.nextMessage((x) => x.type === "CLIENT_ACK_CONFIRM" && x.id === m.id);
      b1.ack({ type: "C2G", msgId: list[0]!.id }, "text");
      await confirmed(list[0]!);
      b1.ack({ type: "C2G", msgId: list[2]!.id }, "frame");
      await confirmed(list[2]!);
      expect(groupIds((await offline(bob)).ids)).toEqual([list[1]!.id]);
      expect(await cursor(bob, gid)).toEqual({ seq: 1n, above: [[3n, 3n]] });
      expect(groupIds((await offline(bob)).ids)).toEqual([list[1]!.id]);
      b1.ack({ type: "C2G", msgId: list[1]!.id }, "protobuf");
      await confirmed(list[1]!);
      expect(groupIds((await offline(bob)).ids)).toEqual([]);
      expect(await cursor(bob, gid)).toEqual({ seq: 3n, above: [] });
      await a1.close();
      await b1.close();
    });

    test("another member cannot take a message's id: the exact id and the same tsid are refused; acks reach the first sender's message", async () => {
      const [alice, mallory, carol] = [await createUser(node, "a1"), await createUser(node, "m1"), await createUser(node, "c1")];
      await seen(carol);
      const gid = await group(alice, [mallory, carol]);
      const a1 = await open(alice);
      const m1 = await open(mallory);
      const m = c2g(alice.userId, gid, "the real one");
      await sendAll(a1, [m]);
      await m1.nextMessage(ofType("C2G", m.id));

      const same = c2g(mallory.userId, gid, "same id", m.id);
      m1.send(same);
      expect(await m1.nextAction("invalid_message")).toMatchObject({ in_reply_to: m.id });
      const [, tsid] = m.id.split(".");
      const suffix = c2g(mallory.userId, gid, "same tsid", `C2G.${tsid}.${Date.now()}.other`);
      m1.send(suffix);
      expect(await m1.nextAction("invalid_message")).toMatchObject({ in_reply_to: suffix.id });

      // Carol was away: she pulls the one real message, and her acks (full id, then tsid only) name it.
      expect(groupIds((await offline(carol)).ids)).toEqual([m.id]);
      const c1 = await open(carol);
      await c1.nextAction("pull_offline_msg");
      c1.ack({ type: "C2G", msgId: suffix.id }, "text");
      expect(await c1.nextAction("invalid_message")).toMatchObject({ in_reply_to: suffix.id });
      expect(groupIds((await offline(carol)).ids)).toEqual([m.id]);
      c1.ack({ type: "C2G", msgId: m.id }, "frame");
      expect(await c1.nextMessage((x) => x.type === "CLIENT_ACK_CONFIRM")).toMatchObject({ id: m.id });
      expect(groupIds((await offline(carol)).ids)).toEqual([]);
      // The history holds one message with that id, the first sender's.
      const h = await history(carol, gid);
      expect(h.body.payload.list.map((x: { id: string; from: bigint }) => [x.id, x.from])).toEqual([[m.id, alice.userId]]);
      for (const c of [a1, m1, c1]) await c.close();
    });

    test("in a C2C pair the peer cannot reuse the other side's id either", async () => {
      const fresh = await startTestNode(kind, { throttleOff: true, heartbeatInterval: 60_000, allowStrangers: true });
      try {
        const [alice, bob] = [await createUser(fresh, "a1"), await createUser(fresh, "b1")];
        const conn = async (u: TestUser) => IbisConnection.open({ url: fresh.url, token: u.token, deviceId: u.deviceId, protocols: ["svc.v2"] });
        const [a1, b1] = [await conn(alice), await conn(bob)];
        const m: ImMessage = { id: newMessageId("C2C"), type: "C2C", from: alice.userId, to: bob.userId, msg_type: "text", payload: { text: "hi" }, server_ts: 0 };
        a1.send(m);
        await a1.nextMessage(ofType("C2C_SERVER_ACK", m.id));
        b1.send({ ...m, from: bob.userId, to: alice.userId });
        expect(await b1.nextAction("invalid_message")).toMatchObject({ in_reply_to: m.id });
        await a1.close();
        await b1.close();
      } finally {
        await fresh.stop();
      }
    });
  });
}
