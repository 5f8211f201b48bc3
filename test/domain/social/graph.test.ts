import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { friends, users } from "../../../src/db/schema/index.ts";
import type { Invalidation } from "../../../src/domain/social/index.ts";
import { SocialFacts } from "../../../src/domain/social/facts.ts";
import { storeKinds } from "../../support/stores.ts";
import { payloadOf, socialEnv, type SocialEnv, type TestUser } from "../../http/social.support.ts";

const TTL = 30_000;
const kindOf = (r: { ok: boolean; error?: { kind: string } }) => (r.ok ? "ok" : r.error!.kind);

for (const kind of storeKinds()) {
  describe(`SocialGraph [${kind}]`, () => {
    let env: SocialEnv;
    let clock = Date.now();
    const changes: Invalidation[] = [];
    beforeAll(async () => {
      env = await socialEnv(kind, { socialCacheTtlMs: TTL, groupSelfJoin: true }, () => clock);
      env.node.social.facts.onInvalidate((c) => changes.push(c));
    });
    afterAll(() => env.stop());

    const graph = () => env.node.social.graph;
    /** Facts of their own over the node's database, their reads counted. */
    const countedFacts = () => {
      const store = env.node.services.store;
      let reads = 0;
      const counted = { ...store, fixed: <T>(q: Parameters<typeof store.fixed>[0]) => (reads++, store.fixed<T>(q)) };
      return { facts: new SocialFacts(counted, { ttlMs: TTL, max: 100 }, () => clock), reads: () => reads };
    };
    async function befriend(a: TestUser, b: TestUser) {
      payloadOf(await env.call(a, "POST", "/api/v1/friend/add", { to: b.id }));
      payloadOf(await env.call(b, "POST", "/api/v1/friend/confirm", { from: a.id }));
    }
    /** checkC2C's answer; once it is given, the cache gives the same at once (checkC2CNow: delivery's routeNow). */
    const c2c = async (from: bigint, to: bigint, encrypted = false) => {
      const answer = kindOf(await graph().checkC2C(from, to, { encrypted }));
      const now = graph().checkC2CNow!(from, to, { encrypted });
      expect(now && kindOf(now)).toBe(answer);
      return answer;
    };

    test("checkC2CNow and groupMembersNow answer nothing until the facts they need are cached", async () => {
      const a = await env.user();
      const b = await env.user();
      await befriend(a, b);
      expect(graph().checkC2CNow!(a.id, b.id, { encrypted: false })).toBeUndefined();
      await env.node.social.facts.user(a.id);
      await env.node.social.facts.user(b.id);
      expect(graph().checkC2CNow!(a.id, b.id, { encrypted: false })).toBeUndefined(); // the pair's relation is not
      expect(graph().checkC2CNow!(a.id, a.id, { encrypted: false })).toEqual({ ok: true, value: undefined }); // a note to oneself needs none
      expect(graph().checkC2CNow!(a.id, 987654322n, { encrypted: false })).toBeUndefined(); // never asked about
      expect(await c2c(a.id, b.id)).toBe("ok");
      expect(graph().groupMembersNow!(a.id, 4243n)).toBeUndefined(); // never asked about
      const gid = payloadOf(await env.call(a, "POST", "/api/v1/group/add", { member_uids: [b.id] })).group.gid;
      const r = await graph().groupMembers(a.id, gid);
      expect(graph().groupMembersNow!(a.id, gid)).toEqual(r);
      // A member leaves: whatever the cache answers at once already knows it (the leave invalidated the group).
      payloadOf(await env.call(b, "POST", "/api/v1/group_member/leave", { gid }));
      expect(kindOf(graph().groupMembersNow!(b.id, gid) ?? (await graph().groupMembers(b.id, gid)))).toBe("not_group_member");
      expect(kindOf(graph().groupMembersNow!(b.id, gid)!)).toBe("not_group_member");
    });

    test("checkC2C: user_not_found, not_a_friend, then ok the moment a friendship is confirmed, and back after delete", async () => {
      const a = await env.user();
      const b = await env.user();
      expect(await c2c(a.id, 987654321n)).toBe("user_not_found");
      expect(await c2c(987654321n, a.id)).toBe("user_not_found");
      expect(await c2c(a.id, b.id)).toBe("not_a_friend"); // now cached
      await befriend(a, b);
      expect(await c2c(a.id, b.id)).toBe("ok");
      expect(await c2c(b.id, a.id)).toBe("ok");
      expect(await c2c(a.id, b.id, true)).toBe("ok"); // E2EE between humans is fine
      payloadOf(await env.call(b, "POST", "/api/v1/friend/delete", { uid: a.id }));
      expect(await c2c(a.id, b.id)).toBe("not_a_friend");
      expect(await c2c(b.id, a.id)).toBe("not_a_friend");
    });

    test("checkC2C: in_denylist when the recipient denied the sender (friends or not), cleared by remove", async () => {
      const a = await env.user();
      const b = await env.user();
      await befriend(a, b);
      expect(await c2c(b.id, a.id)).toBe("ok");
      payloadOf(await env.call(a, "POST", "/api/v1/friend/denylist/add", { denied_user_id: b.id }));
      expect(await c2c(b.id, a.id)).toBe("in_denylist");
      expect(await c2c(a.id, b.id)).toBe("ok"); // the denier may still write
      payloadOf(await env.call(a, "POST", "/api/v1/friend/denylist/remove", { denied_user_id: b.id }));
      expect(await c2c(b.id, a.id)).toBe("ok");
    });

    test("answers are cached: a change behind the cache's back shows only after the TTL", async () => {
      const a = await env.user();
      const b = await env.user();
      expect(await c2c(a.id, b.id)).toBe("not_a_friend");
      const { db } = env.node.services.store;
      await db.insert(friends).values([{ userId: a.id, friendId: b.id }, { userId: b.id, friendId: a.id }]);
      expect(await c2c(a.id, b.id)).toBe("not_a_friend");
      clock += TTL;
      expect(await c2c(a.id, b.id)).toBe("ok");
      // A deleted account: cached as live until invalidated.
      await db.update(users).set({ deletedAt: clock }).where(eq(users.id, b.id));
      expect(await c2c(a.id, b.id)).toBe("ok");
      env.node.social.facts.invalidate({ kind: "user", userId: b.id });
      expect(await c2c(a.id, b.id)).toBe("user_not_found");
    });

    test("askers of a missing key share one read; after an invalidation the next asker reads again", async () => {
      const a = await env.user();
      const b = await env.user();
      const store = env.node.services.store;
      const { facts, reads } = countedFacts();
      const asked = await Promise.all(Array.from({ length: 20 }, () => facts.relation(a.id, b.id)));
      expect(reads()).toBe(1);
      expect(new Set(asked).size).toBe(1);
      expect(asked[0]).toEqual({ friend: false, denied: false });
      // A read under way when the pair is invalidated is not shared with those who ask after it.
      clock += TTL;
      await store.db.insert(friends).values({ userId: a.id, friendId: b.id });
      const before = facts.relation(a.id, b.id);
      facts.invalidate({ kind: "pair", a: a.id, b: b.id });
      const after = facts.relation(a.id, b.id);
      expect(reads()).toBe(3);
      expect((await after).friend).toBe(true);
      await before;
      expect((await facts.relation(a.id, b.id)).friend).toBe(true); // cached now: no read
      expect(reads()).toBe(3);
    });

    test("refresh-ahead: asked in the last quarter of its life, the entry answers at once and is read again once, in the background", async () => {
      const a = await env.user();
      const b = await env.user();
      const store = env.node.services.store;
      const { facts, reads } = countedFacts();
      expect((await facts.relation(a.id, b.id)).friend).toBe(false);
      expect(reads()).toBe(1);
      await store.db.insert(friends).values({ userId: a.id, friendId: b.id }); // behind the cache's back
      clock += TTL * 0.8;
      const asked = Array.from({ length: 10 }, () => facts.relationNow(a.id, b.id));
      expect(asked.every((r) => r?.friend === false)).toBe(true); // answered from the cache, no waiting
      expect(reads()).toBe(2); // one background read for all ten
      for (let t = 0; t < 200 && !facts.relationNow(a.id, b.id)?.friend; t++) await Bun.sleep(5); // the background read lands
      expect(facts.relationNow(a.id, b.id)?.friend).toBe(true);
      clock += TTL * 0.5; // past the first read's life: the second one's still holds
      expect(facts.relationNow(a.id, b.id)?.friend).toBe(true);
      expect(reads()).toBe(2);
    });

    test("a load racing with an invalidation is not cached", async () => {
      const a = await env.user();
      const b = await env.user();
      const facts = env.node.social.facts;
      const pending = facts.relation(a.id, b.id);
      facts.invalidate({ kind: "pair", a: a.id, b: b.id });
      expect((await pending).friend).toBe(false);
      await env.node.services.store.db.insert(friends).values({ userId: a.id, friendId: b.id });
      expect((await facts.relation(a.id, b.id)).friend).toBe(true);
    });

    test("groupMembers: not_found, not_group_member, members; follows join, leave and dissolve at once", async () => {
      const o = await env.user();
      const m = await env.user();
      const late = await env.user();
      expect(kindOf(await graph().groupMembers(o.id, 4242n))).toBe("not_found");
      const gid = payloadOf(await env.call(o, "POST", "/api/v1/group/add", { member_uids: [m.id] })).group.gid;
      const members = async (u: bigint) => {
        const r = await graph().groupMembers(u, gid);
        expect(graph().groupMembersNow!(u, gid)).toEqual(r); // warm now: the same answer at once
        return r.ok ? [...r.value].sort() : r.error.kind;
      };
      expect(await members(o.id)).toEqual([o.id, m.id].sort());
      expect(await members(late.id)).toBe("not_group_member");
      payloadOf(await env.call(late, "POST", "/api/v1/group_member/join", { gid }));
      expect(await members(late.id)).toEqual([o.id, m.id, late.id].sort());
      payloadOf(await env.call(m, "POST", "/api/v1/group_member/leave", { gid }));
      expect(await members(m.id)).toBe("not_group_member");
      expect(await members(o.id)).toEqual([o.id, late.id].sort());
      payloadOf(await env.call(o, "POST", "/api/v1/group/dissolve", { gid }));
      expect(await members(o.id)).toBe("not_found");
    });

    test("friendsOf follows confirm and delete; invalidations are announced for other nodes", async () => {
      const a = await env.user();
      const b = await env.user();
      const c = await env.user();
      expect(await graph().friendsOf(a.id)).toEqual([]);
      changes.length = 0;
      await befriend(a, b);
      await befriend(c, a);
      expect([...(await graph().friendsOf(a.id))].sort()).toEqual([b.id, c.id].sort());
      expect(await graph().friendsOf(b.id)).toEqual([a.id]);
      payloadOf(await env.call(a, "POST", "/api/v1/friend/delete", { uid: b.id }));
      expect(await graph().friendsOf(a.id)).toEqual([c.id]);
      expect(await graph().friendsOf(b.id)).toEqual([]);
      expect(changes).toEqual([
        { kind: "pair", a: b.id, b: a.id },
        { kind: "pair", a: a.id, b: c.id },
        { kind: "pair", a: a.id, b: b.id },
      ]);
      // A remote invalidation drops the entry without being re-announced.
      env.node.social.facts.invalidate({ kind: "group", groupId: 1n }, true);
      expect(changes).toHaveLength(3);
    });

    test("friendsOf asked for many users at once (one batched query): each gets its own list", async () => {
      const hub = await env.user();
      const others = await Promise.all(Array.from({ length: 6 }, () => env.user()));
      for (const o of others.slice(0, 3)) await befriend(hub, o);
      const asked = [hub, ...others];
      const lists = await Promise.all(asked.map((u) => graph().friendsOf(u.id)));
      expect([...lists[0]!].sort()).toEqual(others.slice(0, 3).map((o) => o.id).sort());
      others.forEach((o, i) => expect(lists[i + 1]).toEqual(i < 3 ? [hub.id] : []));
    });
  });

  describe(`SocialGraph with allowStrangers [${kind}]`, () => {
    let env: SocialEnv;
    beforeAll(async () => {
      env = await socialEnv(kind, { allowStrangers: true });
    });
    afterAll(() => env.stop());

    test("strangers may write; the denylist still refuses", async () => {
      const a = await env.user();
      const b = await env.user();
      const graph = env.node.social.graph;
      expect(kindOf(await graph.checkC2C(a.id, b.id, { encrypted: false }))).toBe("ok");
      payloadOf(await env.call(b, "POST", "/api/v1/friend/denylist/add", { denied_user_id: a.id }));
      expect(kindOf(await graph.checkC2C(a.id, b.id, { encrypted: false }))).toBe("in_denylist");
    });
  });
}
