/**
 * End to end over real sockets: REST signup, friends and groups, the SDK on
 * three sub-protocols, the real transport, delivery engine and social graph,
 * on PGlite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { IbisConnection } from "../../src/client/index.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";
import { befriend, connect, message, ofType, signup, withAction, type Account } from "./support.ts";

for (const kind of storeKinds()) {
  describe(`messaging end to end [${kind}]`, () => {
    let node: TestNode;
    let alice: Account, bob: Account, carol: Account;
    let alicePhone: IbisConnection, aliceWeb: IbisConnection, bobPhone: IbisConnection;

    beforeAll(async () => {
      node = await startTestNode(kind);
      alice = await signup(node, "alice", ["alice-phone", "alice-web"]);
      bob = await signup(node, "bob", ["bob-phone"]);
      carol = await signup(node, "carol", ["carol-phone"]);
      await befriend(node, alice, bob);
      alicePhone = await connect(node, alice, "alice-phone", "svc.v2");
      aliceWeb = await connect(node, alice, "alice-web", "svc-json");
      bobPhone = await connect(node, bob, "bob-phone", "svc-protobuf");
    });
    afterAll(async () => {
      for (const c of [alicePhone, aliceWeb, bobPhone]) await c?.close().catch(() => {});
      await node.stop();
    });

    test("C2C: stored, SERVER_ACK, delivered to the peer and the sender's other device, CLIENT_ACK confirmed", async () => {
      const m = message("C2C", alice.userId, bob.userId, { text: "hi bob" });
      alicePhone.send(m, "protobuf");
      const serverAck = await alicePhone.nextMessage(ofType("C2C_SERVER_ACK", m.id));
      expect(serverAck.in_reply_to).toBe(m.id);

      const atBob = await bobPhone.nextMessage(ofType("C2C", m.id));
      expect(atBob).toMatchObject({ from: alice.userId, to: bob.userId, msg_type: "text", payload: { text: "hi bob" } });
      const atAliceWeb = await aliceWeb.nextMessage(ofType("C2C", m.id));
      expect(atAliceWeb.payload).toEqual({ text: "hi bob" });

      bobPhone.ack({ type: "C2C", msgId: m.id }, "protobuf");
      const confirm = await bobPhone.nextMessage((x) => x.action === "CLIENT_ACK_CONFIRM" && x.id === m.id);
      expect(typeof confirm.server_ts).toBe("number");
    });

    test("offline pull: a device that did not acknowledge gets pull_offline_msg and exactly its unacked set", async () => {
      const m1 = message("C2C", bob.userId, alice.userId, { text: "one" });
      const m2 = message("C2C", bob.userId, alice.userId, { text: "two" });
      for (const m of [m1, m2]) {
        bobPhone.send(m, "protobuf");
        await bobPhone.nextMessage(ofType("C2C_SERVER_ACK", m.id));
      }
      // alice-phone acknowledges both (frame ACK form); alice-web acknowledges only m1.
      for (const m of [m1, m2]) {
        await alicePhone.nextMessage(ofType("C2C", m.id));
        alicePhone.ack({ type: "C2C", msgId: m.id }, "frame");
      }
      await aliceWeb.nextMessage(ofType("C2C", m1.id));
      aliceWeb.ack({ type: "C2C", msgId: m1.id }, "text");
      await aliceWeb.nextMessage((x) => x.action === "CLIENT_ACK_CONFIRM" && x.id === m1.id);
      await aliceWeb.close();

      aliceWeb = await connect(node, alice, "alice-web", "svc-json");
      await aliceWeb.nextMessage(withAction("pull_offline_msg"));
      const web = await api(node, "GET", "/api/v1/msg/offline?did=alice-web", { token: alice.tokens["alice-web"] });
      const webIds = web.body.payload.list.filter((x: any) => x.type === "C2C").map((x: any) => x.id);
      expect(webIds).toContain(m2.id);
      expect(webIds).not.toContain(m1.id);

      const phone = await api(node, "GET", "/api/v1/msg/offline?did=alice-phone", { token: alice.tokens["alice-phone"] });
      const phoneIds = phone.body.payload.list.map((x: any) => x.id);
      expect(phoneIds).not.toContain(m1.id);
      expect(phoneIds).not.toContain(m2.id);
    });

    test("C2G: a group created over REST fans out to every member device, each in its own encoding", async () => {
      const created = await api(node, "POST", "/api/v1/group/add", {
        token: alice.tokens["alice-phone"],
        body: { member_uids: [bob.userId], title: "e2e" },
      });
      expect(created.body.code).toBe(0);
      const gid = BigInt(created.body.payload.group.group_id);

      const m = message("C2G", bob.userId, gid, { text: "hello group" });
      bobPhone.send(m, "protobuf");
      await bobPhone.nextMessage(ofType("C2G_SERVER_ACK", m.id));
      for (const c of [alicePhone, aliceWeb]) {
        const got = await c.nextMessage(ofType("C2G", m.id));
        expect(got).toMatchObject({ from: bob.userId, to: gid, payload: { text: "hello group" } });
      }
    });

    test("refusals: C2C to a stranger gets not_a_friend with in_replyTo and is not stored", async () => {
      const m = message("C2C", alice.userId, carol.userId);
      alicePhone.send(m, "protobuf");
      const refusal = await alicePhone.nextMessage(withAction("not_a_friend"));
      expect(refusal.in_reply_to).toBe(m.id);
      const carolOffline = await api(node, "GET", "/api/v1/msg/offline?did=carol-phone", { token: carol.tokens["carol-phone"] });
      expect(carolOffline.body.payload.list.map((x: any) => x.id)).not.toContain(m.id);
    });

    test("social S2C events reach every device of the recipient (friend request to carol from alice)", async () => {
      const carolPhone = await connect(node, carol, "carol-phone", "text");
      try {
        const add = await api(node, "POST", "/api/v1/friend/add", { token: alice.tokens["alice-phone"], body: { to: carol.userId } });
        expect(add.body.code).toBe(0);
        const notice = await carolPhone.nextMessage(withAction("apply_friend"));
        expect(notice.from === "" || notice.from === undefined).toBe(true);
        const confirm = await api(node, "POST", "/api/v1/friend/confirm", { token: carol.tokens["carol-phone"], body: { from: alice.userId } });
        expect(confirm.body.code).toBe(0);
        for (const c of [alicePhone, aliceWeb]) await c.nextMessage(withAction("apply_friend_confirm"));
      } finally {
        await carolPhone.close();
      }
    });
  });
}
