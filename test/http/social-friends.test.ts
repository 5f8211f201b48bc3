import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { storeKinds } from "../support/stores.ts";
import { payloadOf, socialEnv, type SocialEnv } from "./social.support.ts";

for (const kind of storeKinds()) {
  describe(`friends and denylist [${kind}]`, () => {
    let env: SocialEnv;
    beforeAll(async () => {
      env = await socialEnv(kind);
    });
    afterAll(() => env.stop());
    beforeEach(() => env.notifier.clear());

    test("every friend and denylist route needs a token", async () => {
      for (const [method, path] of [
        ["POST", "/api/v1/friend/add"],
        ["POST", "/api/v1/friend/confirm"],
        ["POST", "/api/v1/friend/reject"],
        ["POST", "/api/v1/friend/delete"],
        ["GET", "/api/v1/friend/list"],
        ["POST", "/api/v1/friend/denylist/add"],
        ["POST", "/api/v1/friend/denylist/remove"],
        ["GET", "/api/v1/friend/denylist/page"],
      ] as const) {
        const res = await env.call(undefined, method, path, method === "POST" ? {} : undefined);
        expect(res.status).toBe(401);
        expect(res.body.code).toBe(401);
      }
    });

    test("add → apply_friend to the target; confirm → friends both ways and apply_friend_confirm to the requester", async () => {
      const a = await env.user("alice");
      const b = await env.user("bob");
      const added = payloadOf(await env.call(a, "POST", "/api/v1/friend/add", { to: b.id, payload: { msg: "hi" } }));
      expect(added).toEqual({ user_id: b.id, uid: b.id, nickname: "bob", avatar: "", account_type: 0, status: "pending" });
      const [apply] = env.notifier.of("apply_friend");
      expect(apply!.userIds).toEqual([b.id]);
      expect(apply!.payload).toMatchObject({ user_id: a.id, uid: a.id, from: a.id, to: b.id, nickname: "alice", payload: { msg: "hi" } });

      const confirmed = payloadOf(await env.call(b, "POST", "/api/v1/friend/confirm", { from: a.id, payload: { remark: "x" } }));
      expect(confirmed).toMatchObject({ user_id: a.id, uid: a.id, nickname: "alice" });
      const [done] = env.notifier.of("apply_friend_confirm");
      expect(done!.userIds).toEqual([a.id]);
      expect(done!.payload).toMatchObject({ user_id: b.id, uid: b.id, nickname: "bob", payload: { remark: "x" } });

      const listA = payloadOf(await env.call(a, "GET", "/api/v1/friend/list"));
      expect(listA.list).toEqual([{ user_id: b.id, uid: b.id, nickname: "bob", avatar: "", account_type: 0, remark: "" }]);
      const listB = payloadOf(await env.call(b, "GET", "/api/v1/friend/list"));
      expect(listB.list.map((f: any) => f.user_id)).toEqual([a.id]);

      // Already friends: a second request is refused; a second confirm finds nothing pending.
      expect((await env.call(a, "POST", "/api/v1/friend/add", { to: b.id })).body.code).toBe(409);
      expect((await env.call(b, "POST", "/api/v1/friend/confirm", { from: a.id })).body.code).toBe(404);
    });

    test("ids travel as exact JSON numbers above 2^53, and as decimal strings in requests", async () => {
      const a = await env.user();
      const b = await env.user();
      expect(a.id > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
      const res = await env.call(a, "POST", "/api/v1/friend/add", { to: b.id.toString() });
      expect(payloadOf(res).user_id).toBe(b.id);
      // user_id and uid are accepted for the target too.
      const c = await env.user();
      expect(payloadOf(await env.call(c, "POST", "/api/v1/friend/add", { user_id: b.id })).uid).toBe(b.id);
      const d = await env.user();
      expect(payloadOf(await env.call(d, "POST", "/api/v1/friend/add", { uid: b.id })).user_id).toBe(b.id);
    });

    test("add refusals: missing/bad target, self, unknown user, payload not an object", async () => {
      const a = await env.user();
      const b = await env.user();
      expect((await env.call(a, "POST", "/api/v1/friend/add", {})).body.code).toBe(400);
      expect((await env.call(a, "POST", "/api/v1/friend/add", { to: "abc" })).body.code).toBe(400);
      expect((await env.call(a, "POST", "/api/v1/friend/add", { to: 1.5 })).body.code).toBe(400);
      expect((await env.call(a, "POST", "/api/v1/friend/add", { to: a.id })).body.code).toBe(400);
      expect((await env.call(a, "POST", "/api/v1/friend/add", { to: 12345 })).body.code).toBe(940);
      expect((await env.call(a, "POST", "/api/v1/friend/add", { to: b.id, payload: "x" })).body.code).toBe(400);
      expect(env.notifier.notices).toEqual([]);
    });

    test("reject: the request is refused afterwards; confirm of a rejected or absent request is refused", async () => {
      const a = await env.user();
      const b = await env.user();
      payloadOf(await env.call(a, "POST", "/api/v1/friend/add", { to: b.id }));
      expect((await env.call(a, "POST", "/api/v1/friend/confirm", { from: b.id })).body.code).toBe(404); // wrong direction
      expect(payloadOf(await env.call(b, "POST", "/api/v1/friend/reject", { from: a.id }))).toEqual({ user_id: a.id, uid: a.id });
      expect((await env.call(b, "POST", "/api/v1/friend/reject", { from: a.id })).body.code).toBe(404);
      const res = await env.call(b, "POST", "/api/v1/friend/confirm", { from: a.id });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe(404);
      expect(env.notifier.of("apply_friend_confirm")).toEqual([]);
      expect(payloadOf(await env.call(a, "GET", "/api/v1/friend/list")).list).toEqual([]);
      // Re-sending at once is refused (after a day it reopens: abuse.test.ts); the other side may still ask.
      expect((await env.call(a, "POST", "/api/v1/friend/add", { to: b.id })).body.code).toBe(429);
      payloadOf(await env.call(b, "POST", "/api/v1/friend/add", { to: a.id }));
      payloadOf(await env.call(a, "POST", "/api/v1/friend/confirm", { from: b.id }));
    });

    test("confirm settles a crossed request; delete ends the friendship both ways", async () => {
      const a = await env.user();
      const b = await env.user();
      payloadOf(await env.call(a, "POST", "/api/v1/friend/add", { to: b.id }));
      payloadOf(await env.call(b, "POST", "/api/v1/friend/add", { to: a.id }));
      payloadOf(await env.call(b, "POST", "/api/v1/friend/confirm", { from: a.id }));
      expect((await env.call(a, "POST", "/api/v1/friend/confirm", { from: b.id })).body.code).toBe(404);
      const deleted = payloadOf(await env.call(a, "POST", "/api/v1/friend/delete", { uid: b.id }));
      expect(deleted).toEqual({ user_id: b.id, uid: b.id });
      expect(payloadOf(await env.call(b, "GET", "/api/v1/friend/list")).list).toEqual([]);
      expect((await env.call(a, "POST", "/api/v1/friend/delete", { user_id: b.id })).body.code).toBe(404);
      expect((await env.call(a, "POST", "/api/v1/friend/delete", {})).body.code).toBe(400);
    });

    test("denylist: add, page, remove; a denied user cannot send a friend request", async () => {
      const a = await env.user("denier");
      const b = await env.user("pest");
      const c = await env.user("other");
      const added = payloadOf(await env.call(a, "POST", "/api/v1/friend/denylist/add", { denied_user_id: b.id }));
      expect(added).toEqual({ user_id: b.id, uid: b.id, denied_user_id: b.id });
      payloadOf(await env.call(a, "POST", "/api/v1/friend/denylist/add", { denied_user_id: b.id })); // idempotent
      payloadOf(await env.call(a, "POST", "/api/v1/friend/denylist/add", { uid: c.id }));
      const page = payloadOf(await env.call(a, "GET", "/api/v1/friend/denylist/page?page=1&size=1"));
      expect(page).toMatchObject({ total: 2, page: 1, size: 1 });
      expect(page.list).toHaveLength(1);
      const page2 = payloadOf(await env.call(a, "GET", "/api/v1/friend/denylist/page?page=2&size=1"));
      const both = [page.list[0].user_id, page2.list[0].user_id].sort();
      expect(both).toEqual([b.id, c.id].sort());
      expect(page2.list[0]).toMatchObject({ uid: page2.list[0].user_id, denied_user_id: page2.list[0].user_id });
      expect(typeof page2.list[0].created_at).toBe("number");

      const refused = await env.call(b, "POST", "/api/v1/friend/add", { to: a.id });
      expect(refused.body.code).toBe(942);
      expect(env.notifier.of("apply_friend")).toEqual([]);

      payloadOf(await env.call(a, "POST", "/api/v1/friend/denylist/remove", { denied_user_id: b.id }));
      expect((await env.call(a, "POST", "/api/v1/friend/denylist/remove", { denied_user_id: b.id })).body.code).toBe(404);
      expect(payloadOf(await env.call(a, "GET", "/api/v1/friend/denylist/page")).total).toBe(1);
      payloadOf(await env.call(b, "POST", "/api/v1/friend/add", { to: a.id }));
    });

    test("denylist refusals: self, unknown user, missing id", async () => {
      const a = await env.user();
      expect((await env.call(a, "POST", "/api/v1/friend/denylist/add", { denied_user_id: a.id })).body.code).toBe(400);
      expect((await env.call(a, "POST", "/api/v1/friend/denylist/add", { denied_user_id: 77 })).body.code).toBe(940);
      expect((await env.call(a, "POST", "/api/v1/friend/denylist/add", {})).body.code).toBe(400);
      expect((await env.call(a, "POST", "/api/v1/friend/denylist/remove", {})).body.code).toBe(400);
    });

    test("a failing notifier does not undo or fail the change", async () => {
      const a = await env.user();
      const b = await env.user();
      env.notifier.failing = true;
      try {
        payloadOf(await env.call(a, "POST", "/api/v1/friend/add", { to: b.id }));
        payloadOf(await env.call(b, "POST", "/api/v1/friend/confirm", { from: a.id }));
      } finally {
        env.notifier.failing = false;
      }
      expect(env.notifier.notices.map((n) => n.action)).toEqual(["apply_friend", "apply_friend_confirm"]);
      expect(payloadOf(await env.call(a, "GET", "/api/v1/friend/list")).list[0].user_id).toBe(b.id);
    });

    test("parameters are also read from the query string", async () => {
      const a = await env.user();
      const b = await env.user();
      payloadOf(await env.call(a, "POST", `/api/v1/friend/add?to=${b.id}`));
      payloadOf(await env.call(b, "POST", `/api/v1/friend/confirm?from=${a.id}`));
      expect(payloadOf(await env.call(a, "GET", "/api/v1/friend/list")).list[0].user_id).toBe(b.id);
    });
  });
}
