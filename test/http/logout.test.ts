import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { users } from "../../src/db/schema/index.ts";
import { AccountLogout } from "../../src/domain/auth/logout.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";

const DAY = 86_400_000;

for (const kind of storeKinds()) {
  describe(`account logout [${kind}]`, () => {
    let node: TestNode;
    let t = Date.now();
    const now = () => t;
    const signup = async (account: string) =>
      (await api(node, "POST", "/api/v1/passport/signup", { body: { account, pwd: "secret-1" } })).body.payload as {
        uid: bigint;
        token: string;
        refreshtoken: string;
      };

    beforeAll(async () => {
      node = await startTestNode(kind, { logoutGraceDays: 15 }, { now });
    });
    afterAll(() => node.stop());

    test("apply answers delete_after_at = now + grace; the user id may come as a JSON number, a string or uid", async () => {
      const u = await signup("dora");
      // bigint goes out as a bare JSON number above 2^53; the server must read it exactly.
      for (const body of [{ user_id: u.uid }, { user_id: u.uid.toString() }, { uid: u.uid }, { reason: "bye" }]) {
        const res = await api(node, "POST", "/api/v1/user/apply_logout", { token: u.token, body });
        expect(res.body.code).toBe(0);
        expect(res.body.payload).toMatchObject({ uid: u.uid, user_id: u.uid, requested_at: t, delete_after_at: t + 15 * DAY });
      }
    });

    test("someone else's id is refused; a non-id is a 400", async () => {
      const u = await signup("eve");
      const other = await signup("frank");
      const res = await api(node, "POST", "/api/v1/user/apply_logout", { token: u.token, body: { user_id: other.uid } });
      expect(res.body.code).toBe(403);
      const one = await api(node, "POST", "/api/v1/user/apply_logout", { token: u.token, body: { uid: u.uid + 1n } });
      expect(one.body.code).toBe(403);
      const bad = await api(node, "POST", "/api/v1/user/apply_logout", { token: u.token, body: { user_id: "12ab" } });
      expect(bad.body.code).toBe(400);
      expect((await new AccountLogout(node.services.store, 15, now).pending(other.uid))).toBeUndefined();
    });

    test("applying again keeps the first deadline; cancel undoes it", async () => {
      const u = await signup("gina");
      const first = await api(node, "POST", "/api/v1/user/apply_logout", { token: u.token });
      t += 3_600_000;
      const again = await api(node, "POST", "/api/v1/user/apply_logout", { token: u.token, body: { reason: "really" } });
      expect(again.body.payload.delete_after_at).toBe(first.body.payload.delete_after_at);
      const cancel = await api(node, "POST", "/api/v1/user/cancel_logout", { token: u.token });
      expect(cancel.body.payload).toMatchObject({ cancelled: true, user_id: u.uid });
      expect((await api(node, "POST", "/api/v1/user/cancel_logout", { token: u.token })).body.payload.cancelled).toBe(false);
      t += 30 * DAY;
      expect(await new AccountLogout(node.services.store, 15, now).sweep()).not.toContain(u.uid);
      expect((await api(node, "POST", "/api/v1/passport/login", { body: { account: "gina", pwd: "secret-1" } })).body.code).toBe(0);
    });

    test("the sweep deletes due accounts only; deleted accounts cannot log in and their tokens are refused", async () => {
      const due = await signup("hank");
      expect((await api(node, "POST", "/api/v1/user/apply_logout", { token: due.token })).body.code).toBe(0);
      t += 10 * DAY;
      const notYet = await signup("iris");
      expect((await api(node, "POST", "/api/v1/user/apply_logout", { token: notYet.token })).body.code).toBe(0);
      t += 5 * DAY; // hank's 15 days are over, iris has 10 left
      // Fresh tokens, valid at the new time: only the deletion can make them fail.
      const fresh = (await api(node, "POST", "/api/v1/passport/login", { body: { account: "hank", pwd: "secret-1" } })).body
        .payload as typeof due;
      expect(fresh.uid).toBe(due.uid);
      const sweeper = new AccountLogout(node.services.store, 15, now);
      const gone = await sweeper.sweep();
      expect(gone).toContain(due.uid);
      expect(gone).not.toContain(notYet.uid);
      expect(await sweeper.sweep()).toEqual([]);
      const [row] = await node.services.store.db.select().from(users).where(eq(users.id, due.uid));
      expect(row).toMatchObject({ deletedAt: t, passwordHash: "", nickname: "", account: `deleted.${due.uid}` });

      const login = await api(node, "POST", "/api/v1/passport/login", { body: { account: "hank", pwd: "secret-1" } });
      expect(login.body.code).toBe(401);
      const withToken = await api(node, "POST", "/api/v1/user/cancel_logout", { token: fresh.token });
      expect(withToken.status).toBe(401);
      expect(withToken.body.payload.title).toBeString();
      const refresh = await api(node, "POST", "/api/v1/passport/refreshtoken", { body: { refreshtoken: fresh.refreshtoken } });
      expect(refresh.status).toBe(401);
      // The account name is free again.
      expect((await signup("hank")).uid).not.toBe(due.uid);
      expect(await sweeper.pending(notYet.uid)).toEqual({ requestedAt: t - 5 * DAY, deleteAfterAt: t + 10 * DAY });
    });
  });
}
