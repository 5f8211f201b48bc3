import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ImMessage } from "../../src/delivery/ports.ts";
import { storeKinds } from "../support/stores.ts";
import { payloadOf, socialEnv, type SocialEnv, type TestUser } from "./social.support.ts";

for (const kind of storeKinds()) {
  describe(`mentions [${kind}]`, () => {
    let env: SocialEnv;
    beforeAll(async () => {
      env = await socialEnv(kind);
    });
    afterAll(() => env.stop());

    /** Stores a C2G message and runs the graph's after-store hook, as delivery does. */
    async function say(from: TestUser, gid: bigint, payload: unknown) {
      const serverTs = Date.now();
      const stored = await env.storeMessage({ chatType: "C2G", from: from.id, to: gid, payload, serverTs });
      const msg: ImMessage = { id: stored.clientId, type: "C2G", from: from.id, to: gid, payload, server_ts: serverTs, msg_type: "text" };
      await env.node.social.graph.afterGroupMessage(msg, gid, stored.id);
      return stored;
    }

    async function setup() {
      const o = await env.user("owner");
      const ann = await env.user("ann");
      const ben = await env.user("ben");
      const out = await env.user("outsider");
      const gid = payloadOf(await env.call(o, "POST", "/api/v1/group/add", { member_uids: [ann.id, ben.id] })).group.gid;
      return { o, ann, ben, out, gid };
    }

    test("needs a token", async () => {
      for (const p of ["list", "unread", "mark_read", "suggest"]) {
        expect((await env.call(undefined, "POST", `/api/v1/mention/${p}`)).status).toBe(401);
      }
    });

    test("at_uids creates rows for listed members only (not outsiders, not the sender, once each)", async () => {
      const { o, ann, ben, out, gid } = await setup();
      const m = await say(o, gid, { text: "hi", at_uids: [ann.id, out.id, o.id, ann.id.toString(), 99] });
      const list = payloadOf(await env.call(ann, "POST", "/api/v1/mention/list", {}));
      expect(list.total).toBe(1);
      expect(list.list[0]).toEqual({
        id: list.list[0].id,
        mention_id: list.list[0].id,
        msg_id: m.id,
        client_msg_id: m.clientId,
        group_id: gid,
        gid,
        from_uid: o.id,
        from_user_id: o.id,
        mentioned_uid: ann.id,
        mentioned_user_id: ann.id,
        is_read: false,
        is_read_bool: false,
        created_at: list.list[0].created_at,
      });
      expect(typeof list.list[0].created_at).toBe("number");
      for (const u of [out, o, ben]) expect(payloadOf(await env.call(u, "POST", "/api/v1/mention/list", {})).total).toBe(0);
      // No at_uids, bad at_uids, encrypted payload: nothing.
      await say(o, gid, { text: "plain" });
      await say(o, gid, { text: "bad", at_uids: ["nope", ben.id] });
      await say(o, gid, "Q0lQSEVS");
      expect(payloadOf(await env.call(ben, "POST", "/api/v1/mention/list", {})).total).toBe(0);
      // A redelivered hook for the same message adds nothing.
      const msg: ImMessage = { id: m.clientId, type: "C2G", from: o.id, to: gid, payload: { at_uids: [ann.id] }, server_ts: 1 };
      await env.node.social.graph.afterGroupMessage(msg, gid, m.id);
      expect(payloadOf(await env.call(ann, "POST", "/api/v1/mention/unread", {})).count).toBe(1);
    });

    test("list: standard paging with items identical to list; is_read filter in every spelling; gid/group_id and query/body alike", async () => {
      const { o, ann, ben, gid } = await setup();
      const m1 = await say(o, gid, { at_uids: [ann.id] });
      await say(ben, gid, { at_uids: [ann.id] });
      await say(o, gid, { at_uids: [ann.id] });
      payloadOf(await env.call(ann, "POST", "/api/v1/mention/mark_read", { msg_id: m1.id }));

      const all = payloadOf(await env.call(ann, "POST", "/api/v1/mention/list", { page: 1, size: 2 }));
      expect(all).toMatchObject({ total: 3, page: 1, size: 2 });
      expect(all.items).toEqual(all.list);
      expect(all.list).toHaveLength(2);
      for (const item of all.list) expect(item.is_read).toBe(item.is_read_bool);

      const strip = (p: any) => ({ ...p, list: p.list.map((i: any) => i.id), items: p.items.map((i: any) => i.id) });
      const unreadVariants = await Promise.all(
        [{ is_read: false }, { is_read: 0 }, { is_read: "false" }, { is_read: "0" }].map(async (b) =>
          strip(payloadOf(await env.call(ann, "POST", "/api/v1/mention/list", b))),
        ),
      );
      for (const v of unreadVariants) expect(v).toEqual(unreadVariants[0]);
      expect(unreadVariants[0].total).toBe(2);
      const read = payloadOf(await env.call(ann, "POST", "/api/v1/mention/list?is_read=1"));
      expect(read.total).toBe(1);
      expect(read.list[0]).toMatchObject({ msg_id: m1.id, is_read: true, is_read_bool: true });
      expect(payloadOf(await env.call(ann, "POST", "/api/v1/mention/list", { is_read: true })).total).toBe(1);

      const byGid = payloadOf(await env.call(ann, "POST", "/api/v1/mention/list", { gid }));
      const byGroupId = payloadOf(await env.call(ann, "POST", "/api/v1/mention/list", { group_id: gid }));
      const byQuery = payloadOf(await env.call(ann, "POST", `/api/v1/mention/list?group_id=${gid}`));
      expect(byGid).toEqual(byGroupId);
      expect(byQuery).toEqual(byGid);
      expect(byGid.total).toBe(3);
      expect((await env.call(ann, "POST", "/api/v1/mention/list", { is_read: "maybe" })).body.code).toBe(400);
    });

    test("unread counts per user and per group; mark_read by msg_id, §2.8 id, mention_id (legacy) and all", async () => {
      const { o, ann, gid } = await setup();
      const other = payloadOf(await env.call(o, "POST", "/api/v1/group/add", { member_uids: [ann.id] })).group.gid;
      const m1 = await say(o, gid, { at_uids: [ann.id] });
      const m2 = await say(o, gid, { at_uids: [ann.id] });
      await say(o, gid, { at_uids: [ann.id] });
      await say(o, other, { at_uids: [ann.id] });
      await say(o, other, { at_uids: [ann.id] });
      const unread = async (b: unknown = {}) => payloadOf(await env.call(ann, "POST", "/api/v1/mention/unread", b)).count;
      expect(await unread()).toBe(5);
      expect(await unread({ gid })).toBe(3);
      expect(await unread({ group_id: other })).toBe(2);
      expect(payloadOf(await env.call(ann, "POST", `/api/v1/mention/unread?gid=${other}`)).count).toBe(2);

      // msg_id (standard) and mention_id (legacy) name the same mention: identical answers.
      const list = payloadOf(await env.call(ann, "POST", "/api/v1/mention/list", { gid })).list;
      const mentionOf2 = list.find((i: any) => i.msg_id === m2.id).id;
      const byMsg = await env.call(ann, "POST", "/api/v1/mention/mark_read", { msg_id: m1.id });
      const byMention = await env.call(ann, "POST", "/api/v1/mention/mark_read", { mention_id: mentionOf2 });
      expect(byMsg.body.payload).toEqual({ count: 1 });
      expect(byMention.body.payload).toEqual(byMsg.body.payload);
      expect(await unread({ gid })).toBe(1);
      // Marking again is harmless; the §2.8 id string works too.
      expect(payloadOf(await env.call(ann, "POST", "/api/v1/mention/mark_read", { msg_id: m1.clientId }))).toEqual({ count: 1 });

      expect(payloadOf(await env.call(ann, "POST", "/api/v1/mention/mark_read", { all: true, group_id: other }))).toEqual({ count: 2 });
      expect(await unread()).toBe(1);
      expect(payloadOf(await env.call(ann, "POST", "/api/v1/mention/mark_read?all=1"))).toEqual({ count: 1 });
      expect(await unread()).toBe(0);
    });

    test("mark_read refusals: nothing named, someone else's mention, a group the caller is not in", async () => {
      const { o, ann, ben, out, gid } = await setup();
      const m = await say(o, gid, { at_uids: [ann.id] });
      const mentionId = payloadOf(await env.call(ann, "POST", "/api/v1/mention/list", {})).list[0].id;
      expect((await env.call(ann, "POST", "/api/v1/mention/mark_read", {})).body.code).toBe(400);
      expect((await env.call(ann, "POST", "/api/v1/mention/mark_read", { all: false })).body.code).toBe(400);
      expect((await env.call(ben, "POST", "/api/v1/mention/mark_read", { msg_id: m.id })).body.code).toBe(404);
      expect((await env.call(ben, "POST", "/api/v1/mention/mark_read", { mention_id: mentionId })).body.code).toBe(404);
      expect((await env.call(out, "POST", "/api/v1/mention/mark_read", { all: true, gid })).body.code).toBe(943);
      expect(payloadOf(await env.call(ann, "POST", "/api/v1/mention/unread", {})).count).toBe(1);
    });

    test("a non-member cannot read a group's mentions; leaving hides them", async () => {
      const { o, ann, out, gid } = await setup();
      await say(o, gid, { at_uids: [ann.id] });
      expect((await env.call(out, "POST", "/api/v1/mention/list", { gid })).body.code).toBe(943);
      expect((await env.call(out, "POST", "/api/v1/mention/unread", { gid })).body.code).toBe(943);
      expect((await env.call(out, "POST", "/api/v1/mention/list", { gid: 5151 })).body.code).toBe(404);
      payloadOf(await env.call(ann, "POST", "/api/v1/group_member/leave", { gid }));
      expect(payloadOf(await env.call(ann, "POST", "/api/v1/mention/list", {})).total).toBe(0);
      expect(payloadOf(await env.call(ann, "POST", "/api/v1/mention/unread", {})).count).toBe(0);
      expect((await env.call(ann, "POST", "/api/v1/mention/list", { gid })).body.code).toBe(943);
    });

    test("suggest: members other than the caller, keyword filter, members and items identical; members only", async () => {
      const { o, ann, ben, out, gid } = await setup();
      const all = payloadOf(await env.call(ann, "POST", "/api/v1/mention/suggest", { gid }));
      expect(all.items).toEqual(all.members);
      expect(all.members.map((m: any) => m.user_id).sort()).toEqual([o.id, ben.id].sort());
      expect(all.members[0]).toMatchObject({ uid: all.members[0].user_id, nickname: expect.any(String), role: expect.any(String) });
      const filtered = payloadOf(await env.call(ann, "POST", `/api/v1/mention/suggest?group_id=${gid}&keyword=BE`));
      expect(filtered.members.map((m: any) => m.user_id)).toEqual([ben.id]);
      expect(filtered.items).toEqual(filtered.members);
      expect(payloadOf(await env.call(ann, "POST", "/api/v1/mention/suggest", { gid, keyword: "%" })).members).toEqual([]);
      expect((await env.call(ann, "POST", "/api/v1/mention/suggest", {})).body.code).toBe(400);
      expect((await env.call(out, "POST", "/api/v1/mention/suggest", { gid })).body.code).toBe(943);
    });
  });
}
