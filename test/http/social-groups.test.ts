import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { storeKinds } from "../support/stores.ts";
import { payloadOf, socialEnv, type SocialEnv, type TestUser } from "./social.support.ts";

const sorted = (ids: bigint[]) => [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

for (const kind of storeKinds()) {
  describe(`groups and members [${kind}]`, () => {
    let env: SocialEnv;
    beforeAll(async () => {
      env = await socialEnv(kind, { groupSelfJoin: true });
    });
    afterAll(() => env.stop());
    beforeEach(() => env.notifier.clear());

    async function group(owner: TestUser, members: TestUser[] = [], title = "team") {
      return payloadOf(await env.call(owner, "POST", "/api/v1/group/add", { title, member_uids: members.map((m) => m.id) }));
    }

    test("every group route needs a token", async () => {
      for (const [method, path] of [
        ["POST", "/api/v1/group/add"],
        ["POST", "/api/v1/group/edit"],
        ["POST", "/api/v1/group/dissolve"],
        ["GET", "/api/v1/group/detail"],
        ["GET", "/api/v1/group/page"],
        ["POST", "/api/v1/group_member/join"],
        ["POST", "/api/v1/group_member/leave"],
        ["POST", "/api/v1/group_member/role"],
        ["GET", "/api/v1/group_member/page"],
      ] as const) {
        expect((await env.call(undefined, method, path)).status).toBe(401);
      }
    });

    test("add: owner plus members, group and member_list with both id keys; group_member_join to all members", async () => {
      const o = await env.user("owner");
      const m1 = await env.user("m1");
      const m2 = await env.user("m2");
      const made = await group(o, [m1, m2, m1, o], "crew");
      const gid = made.group.group_id;
      expect(typeof gid).toBe("bigint");
      expect(made.group).toMatchObject({ gid, owner_uid: o.id, owner_user_id: o.id, title: "crew", member_count: 3, role: "owner" });
      expect(made.member_list.map((m: any) => [m.user_id, m.uid, m.role])).toEqual([
        [o.id, o.id, "owner"],
        [m1.id, m1.id, "member"],
        [m2.id, m2.id, "member"],
      ]);
      const [join] = env.notifier.of("group_member_join");
      expect(join!.userIds).toEqual(sorted([o.id, m1.id, m2.id]));
      expect(join!.payload).toMatchObject({ group_id: gid, gid, user_ids: [m1.id, m2.id], uids: [m1.id, m2.id], operator_uid: o.id });
    });

    test("add refusals: unknown member, bad member list, title too long", async () => {
      const o = await env.user();
      expect((await env.call(o, "POST", "/api/v1/group/add", { member_uids: [424242] })).body.code).toBe(940);
      expect((await env.call(o, "POST", "/api/v1/group/add", { member_uids: ["x"] })).body.code).toBe(400);
      expect((await env.call(o, "POST", "/api/v1/group/add", { title: "t".repeat(101) })).body.code).toBe(400);
      // A group of one, no members invited: no join event.
      const alone = await group(o);
      expect(alone.member_list).toHaveLength(1);
      expect(env.notifier.of("group_member_join")).toEqual([]);
    });

    test("detail and member page: members only; gid and group_id are the same parameter", async () => {
      const o = await env.user();
      const m = await env.user();
      const stranger = await env.user();
      const gid = (await group(o, [m])).group.gid;
      const a = payloadOf(await env.call(m, "GET", `/api/v1/group/detail?gid=${gid}`));
      const b = payloadOf(await env.call(m, "GET", `/api/v1/group/detail?group_id=${gid}`));
      expect({ ...a.group, updated_at: 0 }).toEqual({ ...b.group, updated_at: 0 });
      expect(a.group).toMatchObject({ gid, member_count: 2, role: "member" });
      expect((await env.call(stranger, "GET", `/api/v1/group/detail?gid=${gid}`)).body.code).toBe(943);
      expect((await env.call(stranger, "GET", `/api/v1/group_member/page?gid=${gid}`)).body.code).toBe(943);
      // Group history: the real graph, members only.
      expect((await env.call(m, "GET", `/api/v1/msg/history?chat_type=c2g&peer_id=${gid}`)).body.code).toBe(0);
      expect((await env.call(stranger, "GET", `/api/v1/msg/history?chat_type=c2g&peer_id=${gid}`)).body.code).toBe(943);
      expect((await env.call(m, "GET", `/api/v1/group/detail?gid=999`)).body.code).toBe(404);
      expect((await env.call(m, "GET", `/api/v1/group/detail`)).body.code).toBe(400);
      const page = payloadOf(await env.call(m, "GET", `/api/v1/group_member/page?gid=${gid}&page=1&size=1`));
      expect(page).toMatchObject({ total: 2, page: 1, size: 1 });
      expect(page.list[0]).toMatchObject({ user_id: o.id, uid: o.id, role: "owner", gid });
      const page2 = payloadOf(await env.call(m, "GET", `/api/v1/group_member/page?group_id=${gid}&page=2&size=1`));
      expect(page2.list[0]).toMatchObject({ user_id: m.id, role: "member" });
    });

    test("edit: owner and managers may, members may not, strangers are not members", async () => {
      const o = await env.user();
      const mgr = await env.user();
      const m = await env.user();
      const stranger = await env.user();
      const gid = (await group(o, [mgr, m])).group.gid;
      expect((await env.call(mgr, "POST", "/api/v1/group/edit", { gid, title: "nope" })).body.code).toBe(403);
      payloadOf(await env.call(o, "POST", "/api/v1/group_member/role", { gid, user_id: mgr.id, role: "manager" }));
      const edited = payloadOf(await env.call(mgr, "POST", "/api/v1/group/edit", { gid, title: "new", introduction: "hello" }));
      expect(edited.group).toMatchObject({ title: "new", introduction: "hello", avatar: "" });
      payloadOf(await env.call(o, "POST", "/api/v1/group/edit", { group_id: gid, avatar: "a.png" }));
      expect(payloadOf(await env.call(m, "GET", `/api/v1/group/detail?gid=${gid}`)).group).toMatchObject({
        title: "new",
        introduction: "hello",
        avatar: "a.png",
      });
      const denied = await env.call(m, "POST", "/api/v1/group/edit", { gid, title: "x" });
      expect(denied.status).toBe(403);
      expect(denied.body.code).toBe(403);
      expect((await env.call(stranger, "POST", "/api/v1/group/edit", { gid, title: "x" })).body.code).toBe(943);
    });

    test("role: owner only; the owner's role cannot change; target must be a member; role must be manager/member", async () => {
      const o = await env.user();
      const a = await env.user();
      const b = await env.user();
      const stranger = await env.user();
      const gid = (await group(o, [a, b])).group.gid;
      payloadOf(await env.call(o, "POST", "/api/v1/group_member/role", { gid, uid: a.id, role: "manager" }));
      expect((await env.call(a, "POST", "/api/v1/group_member/role", { gid, uid: b.id, role: "manager" })).body.code).toBe(403);
      expect((await env.call(o, "POST", "/api/v1/group_member/role", { gid, uid: o.id, role: "member" })).body.code).toBe(403);
      expect((await env.call(o, "POST", "/api/v1/group_member/role", { gid, uid: stranger.id, role: "manager" })).body.code).toBe(943);
      expect((await env.call(o, "POST", "/api/v1/group_member/role", { gid, uid: b.id, role: "owner" })).body.code).toBe(400);
      payloadOf(await env.call(o, "POST", "/api/v1/group_member/role", { gid, uid: a.id, role: "member" }));
      expect((await env.call(a, "POST", "/api/v1/group/edit", { gid, title: "x" })).body.code).toBe(403);
    });

    test("join: self-join and invitation; group_member_join reaches every member including the new ones", async () => {
      const o = await env.user();
      const m = await env.user();
      const self = await env.user();
      const inv1 = await env.user();
      const inv2 = await env.user();
      const stranger = await env.user();
      const gid = (await group(o, [m])).group.gid;
      env.notifier.clear();

      const joined = payloadOf(await env.call(self, "POST", "/api/v1/group_member/join", { gid }));
      expect(joined.member_list.map((x: any) => x.user_id)).toEqual([self.id]);
      let [ev] = env.notifier.of("group_member_join");
      expect(ev!.userIds).toEqual(sorted([o.id, m.id, self.id]));
      expect(ev!.payload).toMatchObject({ gid, user_ids: [self.id], operator_uid: self.id });
      expect((await env.call(self, "POST", "/api/v1/group_member/join", { gid })).body.code).toBe(409);

      env.notifier.clear();
      const invited = payloadOf(await env.call(m, "POST", "/api/v1/group_member/join", { group_id: gid, member_uids: [inv1.id, inv2.id, o.id] }));
      expect(sorted(invited.member_list.map((x: any) => x.user_id))).toEqual(sorted([inv1.id, inv2.id]));
      [ev] = env.notifier.of("group_member_join");
      expect(ev!.userIds).toEqual(sorted([o.id, m.id, self.id, inv1.id, inv2.id]));
      expect(sorted(ev!.payload.user_ids as bigint[])).toEqual(sorted([inv1.id, inv2.id]));

      expect((await env.call(stranger, "POST", "/api/v1/group_member/join", { gid, member_uids: [stranger.id, inv1.id] })).body.code).toBe(943);
      expect((await env.call(m, "POST", "/api/v1/group_member/join", { gid, member_uids: [inv1.id] })).body.code).toBe(409);
      expect((await env.call(m, "POST", "/api/v1/group_member/join", { gid, member_uids: [31337] })).body.code).toBe(940);
      expect((await env.call(m, "POST", "/api/v1/group_member/join", { gid: 31337 })).body.code).toBe(404);
      expect(payloadOf(await env.call(o, "GET", `/api/v1/group/detail?gid=${gid}`)).group.member_count).toBe(5);
    });

    test("leave: group_member_leave to every member including the leaver; the owner cannot leave", async () => {
      const o = await env.user();
      const a = await env.user();
      const b = await env.user();
      const gid = (await group(o, [a, b])).group.gid;
      env.notifier.clear();
      payloadOf(await env.call(a, "POST", "/api/v1/group_member/leave", { gid }));
      const [ev] = env.notifier.of("group_member_leave");
      expect(ev!.userIds).toEqual(sorted([o.id, a.id, b.id]));
      expect(ev!.payload).toEqual({ group_id: gid, gid, user_id: a.id, uid: a.id });
      expect((await env.call(a, "POST", "/api/v1/group_member/leave", { gid })).body.code).toBe(943);
      expect((await env.call(a, "GET", `/api/v1/group/detail?gid=${gid}`)).body.code).toBe(943);
      expect((await env.call(a, "GET", `/api/v1/msg/history?chat_type=c2g&peer_id=${gid}`)).body.code).toBe(943);
      const owner = await env.call(o, "POST", "/api/v1/group_member/leave", { gid });
      expect(owner.body.code).toBe(403);
      expect(owner.body.msg).toContain("dissolve");
    });

    test("dissolve: owner only; group_dissolve to every member; the group is gone afterwards", async () => {
      const o = await env.user();
      const mgr = await env.user();
      const m = await env.user();
      const stranger = await env.user();
      const gid = (await group(o, [mgr, m])).group.gid;
      payloadOf(await env.call(o, "POST", "/api/v1/group_member/role", { gid, uid: mgr.id, role: "manager" }));
      env.notifier.clear();
      expect((await env.call(m, "POST", "/api/v1/group/dissolve", { gid })).body.code).toBe(403);
      expect((await env.call(mgr, "POST", "/api/v1/group/dissolve", { gid })).body.code).toBe(403);
      expect((await env.call(stranger, "POST", "/api/v1/group/dissolve", { gid })).body.code).toBe(943);
      expect(env.notifier.notices).toEqual([]);
      expect(payloadOf(await env.call(o, "POST", "/api/v1/group/dissolve", { gid }))).toEqual({ group_id: gid, gid });
      const [ev] = env.notifier.of("group_dissolve");
      expect(ev!.userIds).toEqual(sorted([o.id, mgr.id, m.id]));
      expect(ev!.payload).toMatchObject({ group_id: gid, gid, operator_uid: o.id, operator_user_id: o.id });
      expect((await env.call(o, "GET", `/api/v1/group/detail?gid=${gid}`)).body.code).toBe(404);
      expect((await env.call(o, "POST", "/api/v1/group/dissolve", { gid })).body.code).toBe(404);
      expect((await env.call(m, "POST", "/api/v1/group_member/join", { gid })).body.code).toBe(404);
    });

    test("group/page: attr owner|join|manager, missing or unknown falls back to owner, standard paging", async () => {
      const me = await env.user();
      const other = await env.user();
      const owned1 = (await group(me, [], "o1")).group.gid;
      const owned2 = (await group(me, [other], "o2")).group.gid;
      const joined = (await group(other, [me], "j1")).group.gid;
      const managed = (await group(other, [me], "m1")).group.gid;
      payloadOf(await env.call(other, "POST", "/api/v1/group_member/role", { gid: managed, uid: me.id, role: "manager" }));
      const gids = async (q: string) => {
        const p = payloadOf(await env.call(me, "GET", `/api/v1/group/page${q}`));
        return { total: p.total, page: p.page, size: p.size, ids: sorted(p.list.map((g: any) => g.gid)) };
      };
      const owner = { total: 2, page: 1, size: 20, ids: sorted([owned1, owned2]) };
      expect(await gids("?attr=owner")).toEqual(owner);
      expect(await gids("")).toEqual(owner);
      expect(await gids("?attr=bogus")).toEqual(owner);
      expect(await gids("?attr=join")).toEqual({ total: 2, page: 1, size: 20, ids: sorted([joined, managed]) });
      expect(await gids("?attr=manager")).toEqual({ total: 1, page: 1, size: 20, ids: [managed] });
      const p = payloadOf(await env.call(me, "GET", `/api/v1/group/page?attr=owner&page=2&size=1`));
      expect(p).toMatchObject({ total: 2, page: 2, size: 1 });
      expect(p.list).toHaveLength(1);
      expect(p.list[0]).toMatchObject({ role: "owner", owner_uid: me.id });
      expect(typeof p.list[0].member_count).toBe("number");
      // Dissolved groups leave the list.
      payloadOf(await env.call(me, "POST", "/api/v1/group/dissolve", { gid: owned1 }));
      expect((await gids("?attr=owner")).ids).toEqual([owned2]);
    });
  });

  describe(`group self-join off (the default) [${kind}]`, () => {
    let env: SocialEnv;
    beforeAll(async () => {
      env = await socialEnv(kind);
    });
    afterAll(() => env.stop());

    test("a self-join is a request the owner and managers hear of; inviting the requester admits them", async () => {
      const o = await env.user();
      const mgr = await env.user();
      const m = await env.user();
      const u = await env.user();
      const gid = payloadOf(await env.call(o, "POST", "/api/v1/group/add", { member_uids: [mgr.id, m.id] })).group.gid;
      payloadOf(await env.call(o, "POST", "/api/v1/group_member/role", { gid, user_id: mgr.id, role: "manager" }));
      env.notifier.clear();
      const asked = payloadOf(await env.call(u, "POST", "/api/v1/group_member/join", { gid }));
      expect(asked).toMatchObject({ gid, status: "pending", member_list: [] });
      const [ev] = env.notifier.of("group_member_join");
      expect(ev!.userIds).toEqual(sorted([o.id, mgr.id]));
      expect(ev!.payload).toMatchObject({ gid, user_ids: [u.id], pending: true });
      // Not a member yet: group endpoints still refuse.
      expect((await env.call(u, "GET", `/api/v1/group/detail?gid=${gid}`)).body.code).toBe(943);

      env.notifier.clear();
      payloadOf(await env.call(mgr, "POST", "/api/v1/group_member/join", { gid, member_uids: [u.id] }));
      const [joined] = env.notifier.of("group_member_join");
      expect(joined!.payload).toMatchObject({ user_ids: [u.id] });
      expect(joined!.payload.pending).toBeUndefined();
      expect(payloadOf(await env.call(u, "GET", `/api/v1/group/detail?gid=${gid}`)).group.member_count).toBe(4);
      expect((await env.call(u, "POST", "/api/v1/group_member/join", { gid })).body.code).toBe(409);
    });
  });
}
