/**
 * Issue 5's S2C events through the real delivery path: REST calls on a real
 * node, every recipient with several devices on real sockets (SDK, three
 * sub-protocols), one device of Carol away the whole time: it is owed every
 * notice and pulls them offline. Both stores.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { IbisConnection } from "../../src/client/index.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";
import { befriend, connect, message, ofType, signup, withAction, type Account } from "./support.ts";

for (const kind of storeKinds()) {
  describe(`social S2C events to every device [${kind}]`, () => {
    let node: TestNode;
    let alice: Account, bob: Account, carol: Account;
    const live = new Map<string, IbisConnection>();
    const devices = (...names: string[]) => names.map((n) => live.get(n)!);
    const call = async (who: Account, path: string, body: Record<string, unknown>) => {
      const res = await api(node, "POST", path, { token: Object.values(who.tokens)[0], body });
      expect(res.body.code).toBe(0);
      return res.body.payload;
    };
    /** Every listed device gets one notice with `action` whose payload matches. */
    const everyone = async (conns: IbisConnection[], action: string, payload: Record<string, unknown>) => {
      for (const c of conns) {
        const got = await c.nextMessage((m) => m.action === action && Object.entries(payload).every(([k, v]) => m.payload?.[k] === v));
        expect(got).toMatchObject({ type: "S2C", payload });
        c.ack({ type: "S2C", msgId: got.id });
      }
    };

    beforeAll(async () => {
      node = await startTestNode(kind);
      alice = await signup(node, "alice", ["a1", "a2"]);
      bob = await signup(node, "bob", ["b1", "b2"]);
      carol = await signup(node, "carol", ["c1", "c-away"]);
      const protocols = ["svc.v2", "svc-json", "svc-protobuf"] as const;
      let i = 0;
      for (const [who, names] of [[alice, ["a1", "a2"]], [bob, ["b1", "b2"]], [carol, ["c1"]]] as const) {
        for (const d of names) live.set(d, await connect(node, who, d, protocols[i++ % 3]));
      }
    });
    afterAll(async () => {
      for (const c of live.values()) await c.close().catch(() => {});
      await node.stop();
    });

    test("apply_friend reaches every device of the target, apply_friend_confirm every device of the requester", async () => {
      await call(alice, "/api/v1/friend/add", { to: bob.userId });
      await everyone(devices("b1", "b2"), "apply_friend", { from: alice.userId, to: bob.userId });
      await call(bob, "/api/v1/friend/confirm", { from: alice.userId });
      await everyone(devices("a1", "a2"), "apply_friend_confirm", { from: bob.userId, to: alice.userId });
      await call(alice, "/api/v1/friend/add", { to: carol.userId });
      await everyone(devices("c1"), "apply_friend", { from: alice.userId });
    });

    test("presence: offline when the last device leaves, online when the first comes back, to every device of every friend", async () => {
      for (const d of ["b1", "b2"]) await live.get(d)!.close();
      await everyone(devices("a1", "a2"), "offline", { user_id: bob.userId, uid: bob.userId });
      live.set("b1", await connect(node, bob, "b1"));
      await everyone(devices("a1", "a2"), "online", { user_id: bob.userId, uid: bob.userId });
      live.set("b2", await connect(node, bob, "b2", "svc-json"));
      // A friend of nobody's hears nothing; Bob's second device is not a "first" one.
      expect(live.get("c1")!.pending.filter((e) => e.kind === "message" && ["online", "offline"].includes(e.msg.action))).toHaveLength(0);
    });

    test("group_member_join, group_member_leave and group_dissolve reach every device of every member", async () => {
      const made = await call(alice, "/api/v1/group/add", { member_uids: [bob.userId], title: "crew" });
      const gid = BigInt(made.group.group_id);
      await everyone(devices("a1", "a2", "b1", "b2"), "group_member_join", { gid });

      // Self-join is off: Carol's join is a request the owner hears of, and the owner's invitation admits her.
      await call(carol, "/api/v1/group_member/join", { gid });
      await everyone(devices("a1", "a2"), "group_member_join", { gid, operator_uid: carol.userId, pending: true });
      await call(alice, "/api/v1/group_member/join", { gid, member_uids: [carol.userId] });
      await everyone(devices("a1", "a2", "b1", "b2", "c1"), "group_member_join", { gid, operator_uid: alice.userId });

      await call(bob, "/api/v1/group_member/leave", { gid });
      await everyone(devices("a1", "a2", "b1", "b2", "c1"), "group_member_leave", { gid, uid: bob.userId });

      await call(alice, "/api/v1/group/dissolve", { gid });
      await everyone(devices("a1", "a2", "c1"), "group_dissolve", { gid, operator_uid: alice.userId });
      for (const c of devices("b1", "b2")) {
        expect(c.pending.some((e) => e.kind === "message" && e.msg.action === "group_dissolve")).toBe(false);
      }
    });

    test("a C2G over a socket with payload.at_uids creates mentions for the members named (real delivery path)", async () => {
      const made = await call(bob, "/api/v1/group/add", { member_uids: [alice.userId], title: "mentions" });
      const gid = BigInt(made.group.group_id);
      for (const c of devices("a1", "a2", "b1", "b2")) c.ack({ type: "S2C", msgId: (await c.nextAction("group_member_join")).id });
      const m = message("C2G", bob.userId, gid, { text: "@alice @carol", at_uids: [alice.userId, carol.userId] });
      live.get("b1")!.send(m);
      await live.get("b1")!.nextMessage(ofType("C2G_SERVER_ACK", m.id));
      await node.services.delivery!.flush(); // afterGroupMessage runs after the ack
      const list = await api(node, "POST", "/api/v1/mention/list", { token: alice.tokens["a1"], body: { gid } });
      expect(list.body.payload.list).toHaveLength(1);
      expect(list.body.payload.list[0]).toMatchObject({ client_msg_id: m.id, gid, from_uid: bob.userId, is_read: false, is_read_bool: false });
      // Carol is not a member: no mention, and the group's mentions are not hers to read.
      expect((await api(node, "POST", "/api/v1/mention/unread", { token: carol.tokens["c1"], body: {} })).body.payload).toEqual({ count: 0 });
      expect((await api(node, "POST", "/api/v1/mention/list", { token: carol.tokens["c1"], body: { gid } })).body.code).toBe(943);
      for (const c of devices("a1", "a2")) c.ack({ type: "C2G", msgId: (await c.nextMessage(ofType("C2G", m.id))).id });
    });

    test("a device that was away is told to pull and finds every notice it is owed, in order", async () => {
      const away = await connect(node, carol, "c-away", "svc-protobuf");
      live.set("c-away", away);
      await away.nextAction("pull_offline_msg");
      const res = await api(node, "GET", "/api/v1/msg/offline", { token: carol.tokens["c-away"] });
      const actions = res.body.payload.list.map((m: { action: string }) => m.action);
      expect(actions).toEqual(["apply_friend", "group_member_join", "group_member_leave", "group_dissolve"]);
      // c1 acknowledged each as it came: nothing owed to it.
      const c1 = await api(node, "GET", "/api/v1/msg/offline", { token: carol.tokens["c1"] });
      expect(c1.body.payload.list).toEqual([]);
    });
  });
}
