/**
 * The delivery engine behind the real transport, real social graph and the
 * SDK client, over real sockets (both stores).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { IbisConnection, newMessageId } from "../../src/client/index.ts";
import type { ImMessage } from "../../src/delivery/ports.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";
import { c2c, createUser, type TestUser } from "../support/ws.ts";

for (const kind of storeKinds()) {
  describe(`delivery over real sockets [${kind}]`, () => {
    let node: TestNode;
    let alice: TestUser, bob: TestUser, carol: TestUser;
    beforeAll(async () => {
      node = await startTestNode(kind, { allowStrangers: true, throttleOff: true, heartbeatInterval: 60_000 });
      [alice, bob, carol] = [await createUser(node, "a1"), await createUser(node, "b1"), await createUser(node, "c1")];
    });
    afterAll(() => node.stop());
    const open = async (u: TestUser, did: string, protocols: string[]) => {
      const { token } = await node.services.tokens.pair(u.userId, did);
      return IbisConnection.open({ url: node.url, token, deviceId: did, protocols });
    };

    test("C2C to every device and the sender's others; acks in the text, protobuf and frame forms; offline pull", async () => {
      const a1 = await open(alice, "a1", ["svc.v2"]);
      const a2 = await open(alice, "a2", ["svc-json"]);
      const b1 = await open(bob, "b1", ["svc-json"]);
      const b2 = await open(bob, "b2", ["svc.v2"]);
      const away = await open(bob, "b3", ["svc-protobuf"]); // known device, then offline
      await away.close();
      const m = c2c(alice.userId, bob.userId, "hello");
      a1.send(m);
      expect(await a1.nextMessage((x) => x.in_reply_to === m.id)).toMatchObject({ type: "C2C_SERVER_ACK", id: m.id });
      for (const c of [b1, b2, a2]) {
        expect(await c.nextMessage((x) => x.id === m.id && x.type === "C2C")).toMatchObject({
          from: alice.userId,
          to: bob.userId,
          payload: { text: "hello" },
        });
      }
      b1.ack({ type: "C2C", msgId: m.id }, "text");
      b2.ack({ type: "C2C", msgId: m.id }, "frame");
      a2.ack({ type: "C2C", msgId: m.id }, "protobuf");
      for (const c of [b1, b2, a2]) expect(await c.nextAction("CLIENT_ACK_CONFIRM")).toMatchObject({ id: m.id, in_reply_to: m.id });

      const b3 = await open(bob, "b3", ["svc-protobuf"]);
      await b3.nextAction("pull_offline_msg");
      const { token } = await node.services.tokens.pair(bob.userId, "b3");
      const off = await api(node, "GET", "/api/v1/msg/offline", { token });
      expect(off.body.payload.list.map((x: { id: string }) => x.id)).toEqual([m.id]);
      for (const c of [a1, a2, b1, b2, b3]) await c.close();
    });

    test("a large C2C read from its frame's bytes (svc.v2, JSON and protobuf) arrives exactly on svc-json, svc.v2 and svc-protobuf, and is stored exactly", async () => {
      const a1 = await open(alice, "a1", ["svc.v2"]);
      const devices = [await open(carol, "c1", ["svc-json"]), await open(carol, "c2", ["svc.v2"]), await open(carol, "c3", ["svc-protobuf"])];
      // Long strings the decoder leaves in the bytes (plain, non-ASCII), one it decodes at once (starts with a digit),
      // one with escapes (parsed); ~1.5 MiB in all.
      const payload = { text: "ab✓水😀 ".repeat(60_000), n: `7${"0".repeat(9_000)}`, esc: 'é\n"\\'.repeat(3_000), parts: ["p".repeat(70_000), { q: "水".repeat(30_000) }] };
      const sent: string[] = [];
      for (const encoding of ["json", "protobuf"] as const) {
        const m = { ...c2c(alice.userId, carol.userId), payload };
        sent.push(m.id);
        a1.send(m, encoding);
        expect(await a1.nextMessage((x) => x.in_reply_to === m.id, 20_000)).toMatchObject({ type: "C2C_SERVER_ACK", id: m.id });
        for (const c of devices) {
          const got = await c.nextMessage((x) => x.id === m.id && x.type === "C2C", 20_000);
          expect(got.payload).toEqual(payload);
        }
      }
      const { token } = await node.services.tokens.pair(carol.userId, "c1"); // not acknowledged: still pending
      const off = await api(node, "GET", "/api/v1/msg/offline", { token });
      expect(off.body.payload.list.map((x: { id: string; payload: unknown }) => [x.id, x.payload])).toEqual(sent.map((id) => [id, payload]));
      for (const c of [a1, ...devices]) await c.close();
    });

    test("C2G through the real group membership; refusal for a non-member", async () => {
      const made = await node.social.groups.create(alice.userId, [bob.userId], "g");
      if (!made.ok) throw new Error(made.error.msg);
      const gid = made.value.group.group_id as bigint;
      const a1 = await open(alice, "a1", ["svc.v2"]);
      const b1 = await open(bob, "b1", ["svc-json"]);
      const c1 = await open(carol, "c1", ["svc-json"]);
      const m: ImMessage = { id: newMessageId("C2G"), type: "C2G", from: alice.userId, to: gid, msg_type: "text", payload: { text: "hi all" }, server_ts: 0 };
      a1.send(m);
      await a1.nextMessage((x) => x.in_reply_to === m.id && x.type === "C2G_SERVER_ACK");
      expect(await b1.nextMessage((x) => x.id === m.id)).toMatchObject({ type: "C2G", to: gid });
      const bad: ImMessage = { ...m, id: newMessageId("C2G"), from: carol.userId };
      c1.send(bad);
      expect(await c1.nextAction("not_group_member")).toMatchObject({ in_reply_to: bad.id });
      for (const c of [a1, b1, c1]) await c.close();
    });
  });
}
