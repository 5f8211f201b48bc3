import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { storeKinds } from "../support/stores.ts";
import { payloadOf, socialEnv, type SocialEnv } from "./social.support.ts";

for (const kind of storeKinds()) {
  describe(`conversation list [${kind}]`, () => {
    let env: SocialEnv;
    let clock = Date.now();
    beforeAll(async () => {
      env = await socialEnv(kind, {}, () => clock);
    });
    afterAll(() => env.stop());

    test("needs a token", async () => {
      for (const [m, p] of [
        ["GET", "/api/v1/conversation/mine"],
        ["POST", "/api/v1/conversation/pin"],
        ["POST", "/api/v1/conversation/delete"],
      ] as const) {
        expect((await env.call(undefined, m, p)).status).toBe(401);
      }
    });

    test("c2c and c2g merged, newest server_ts per conversation, last_msg from the store, incremental pull", async () => {
      const me = await env.user();
      const bob = await env.user();
      const carol = await env.user();
      const o = await env.user();
      const gid = payloadOf(await env.call(o, "POST", "/api/v1/group/add", { member_uids: [me.id] })).group.gid;
      const other = payloadOf(await env.call(o, "POST", "/api/v1/group/add", {})).group.gid; // not mine
      const t = 1_700_000_000_000;
      await env.storeMessage({ chatType: "C2C", from: me.id, to: bob.id, payload: { text: "1" }, serverTs: t + 1 });
      const lastBob = await env.storeMessage({ chatType: "C2C", from: bob.id, to: me.id, payload: { text: "2", n: 2n ** 60n }, serverTs: t + 5 });
      await env.storeMessage({ chatType: "C2C", from: me.id, to: carol.id, payload: { text: "c" }, serverTs: t + 3 });
      await env.storeMessage({ chatType: "C2G", from: o.id, to: gid, payload: { text: "g1" }, serverTs: t + 2 });
      const lastG = await env.storeMessage({ chatType: "C2G", from: o.id, to: gid, payload: { text: "g2" }, serverTs: t + 4 });
      await env.storeMessage({ chatType: "C2G", from: o.id, to: other, payload: { text: "x" }, serverTs: t + 9 });
      await env.storeMessage({ chatType: "C2C", from: bob.id, to: carol.id, payload: { text: "not mine" }, serverTs: t + 9 });

      const list = payloadOf(await env.call(me, "GET", "/api/v1/conversation/mine"));
      expect(list.map((c: any) => [c.conversation_type, c.conversation_id, c.server_ts])).toEqual([
        ["c2c", bob.id, t + 5],
        ["c2g", gid, t + 4],
        ["c2c", carol.id, t + 3],
      ]);
      expect(list[0]).toMatchObject({ last_msg_id: lastBob.clientId, is_pinned: false });
      expect(list[0].last_msg).toMatchObject({
        id: lastBob.clientId,
        server_msg_id: lastBob.id,
        type: "C2C",
        from: bob.id,
        to: me.id,
        msg_type: "text",
        payload: { text: "2", n: 2n ** 60n },
        server_ts: t + 5,
      });
      expect(list[1]).toMatchObject({ last_msg_id: lastG.clientId, last_msg: { to: gid, payload: { text: "g2" } } });

      const since = payloadOf(await env.call(me, "GET", `/api/v1/conversation/mine?last_server_ts=${t + 4}`));
      expect(since.map((c: any) => c.conversation_id)).toEqual([bob.id]); // strictly newer
      expect(payloadOf(await env.call(me, "GET", `/api/v1/conversation/mine?last_server_ts=${t + 5}`))).toEqual([]);
      expect((await env.call(me, "GET", "/api/v1/conversation/mine?last_server_ts=abc")).body.code).toBe(400);
    });

    test("an encrypted last message keeps its ciphertext string and e2ee metadata", async () => {
      const me = await env.user();
      const peer = await env.user();
      const e2ee = { e2ee: true, e2ee_ver: 1, e2ee_suite: "RSA-OAEP-256+AES-256-GCM", nonce: "bm9uY2U=", keys: [] };
      await env.storeMessage({ chatType: "C2C", from: peer.id, to: me.id, payload: "Q0lQSEVS", e2ee, serverTs: 1000 });
      const [c] = payloadOf(await env.call(me, "GET", "/api/v1/conversation/mine"));
      expect(c.last_msg.payload).toBe("Q0lQSEVS");
      expect(c.last_msg.e2ee).toEqual(e2ee);
    });

    test("pin: pinned first; delete: hidden until a newer message; a left group drops out", async () => {
      const me = await env.user();
      const a = await env.user();
      const b = await env.user();
      const o = await env.user();
      const gid = payloadOf(await env.call(o, "POST", "/api/v1/group/add", { member_uids: [me.id] })).group.gid;
      clock += 3_600_000; // an hour on: the deletion record must cover the messages below
      await env.storeMessage({ chatType: "C2C", from: me.id, to: a.id, payload: { text: "a" }, serverTs: clock - 30 });
      await env.storeMessage({ chatType: "C2C", from: me.id, to: b.id, payload: { text: "b" }, serverTs: clock - 20 });
      await env.storeMessage({ chatType: "C2G", from: o.id, to: gid, payload: { text: "g" }, serverTs: clock - 10 });
      const ids = async () => payloadOf(await env.call(me, "GET", "/api/v1/conversation/mine")).map((c: any) => [c.conversation_id, c.is_pinned]);
      expect(await ids()).toEqual([[gid, false], [b.id, false], [a.id, false]]);

      const pinned = payloadOf(await env.call(me, "POST", "/api/v1/conversation/pin", { conversation_id: a.id, conversation_type: "c2c", is_pinned: true }));
      expect(pinned).toEqual({ conversation_id: a.id, conversation_type: "c2c", is_pinned: true });
      expect(await ids()).toEqual([[a.id, true], [gid, false], [b.id, false]]);
      payloadOf(await env.call(me, "POST", "/api/v1/conversation/pin", { conversation_id: a.id, conversation_type: "C2C", is_pinned: "0" }));
      expect(await ids()).toEqual([[gid, false], [b.id, false], [a.id, false]]);

      const del = payloadOf(await env.call(me, "POST", "/api/v1/conversation/delete", { conversation_id: b.id, conversation_type: "c2c" }));
      expect(del).toMatchObject({ conversation_id: b.id, conversation_type: "c2c", deleted_ts: clock });
      expect(await ids()).toEqual([[gid, false], [a.id, false]]);
      // The peer still sees it: deletion is per user.
      expect(payloadOf(await env.call(b, "GET", "/api/v1/conversation/mine")).map((c: any) => c.conversation_id)).toEqual([me.id]);
      await env.storeMessage({ chatType: "C2C", from: b.id, to: me.id, payload: { text: "back" }, serverTs: clock + 1 });
      expect(await ids()).toEqual([[b.id, false], [gid, false], [a.id, false]]);

      payloadOf(await env.call(me, "POST", "/api/v1/group_member/leave", { gid }));
      expect(await ids()).toEqual([[b.id, false], [a.id, false]]);
    });

    test("pin/delete refusals: bad type, missing id, unknown peer, a group the caller is not in", async () => {
      const me = await env.user();
      const o = await env.user();
      const gid = payloadOf(await env.call(o, "POST", "/api/v1/group/add", {})).group.gid;
      const pin = (body: unknown) => env.call(me, "POST", "/api/v1/conversation/pin", body);
      expect((await pin({ conversation_id: o.id, conversation_type: "c2x", is_pinned: true })).body.code).toBe(400);
      expect((await pin({ conversation_type: "c2c", is_pinned: true })).body.code).toBe(400);
      expect((await pin({ conversation_id: o.id, conversation_type: "c2c" })).body.code).toBe(400);
      expect((await pin({ conversation_id: 4242, conversation_type: "c2c", is_pinned: true })).body.code).toBe(940);
      expect((await pin({ conversation_id: gid, conversation_type: "c2g", is_pinned: true })).body.code).toBe(943);
      expect((await pin({ conversation_id: 4242, conversation_type: "c2g", is_pinned: true })).body.code).toBe(404);
      const del = (body: unknown) => env.call(me, "POST", "/api/v1/conversation/delete", body);
      expect((await del({ conversation_id: gid, conversation_type: "c2g" })).body.code).toBe(943);
      expect((await del({ conversation_id: gid })).body.code).toBe(400);
    });
  });
}
