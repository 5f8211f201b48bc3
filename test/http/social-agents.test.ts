import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { seedAssistants } from "../../src/domain/social/index.ts";
import { storeKinds } from "../support/stores.ts";
import { payloadOf, socialEnv, type SocialEnv } from "./social.support.ts";

const SEED = JSON.stringify([
  { account: "helper", nickname: "Helper", description: "answers questions" },
  { account: "writer", nickname: "Writer", avatar: "w.png", description: "drafts text" },
]);

for (const kind of storeKinds()) {
  describe(`assistants [${kind}]`, () => {
    let env: SocialEnv;
    beforeAll(async () => {
      env = await socialEnv(kind, { assistants: SEED });
    });
    afterAll(() => env.stop());

    test("needs a token", async () => {
      expect((await env.call(undefined, "GET", "/api/v1/agent/list")).status).toBe(401);
    });

    test("config seeds assistants; list is standard paging with §2.9 records, size defaults to 10, humans and bots excluded", async () => {
      const me = await env.user("human");
      await env.user("official", 2);
      const list = payloadOf(await env.call(me, "GET", "/api/v1/agent/list"));
      expect(list).toMatchObject({ total: 2, page: 1, size: 10 });
      expect(list.list.map((a: any) => a.nickname)).toEqual(["Helper", "Writer"]);
      const w = list.list[1];
      expect(w).toEqual({ user_id: w.user_id, uid: w.user_id, nickname: "Writer", avatar: "w.png", description: "drafts text", account_type: 1 });
      expect(typeof w.user_id).toBe("bigint");
    });

    test("keyword filters nickname/description; paging; seeding is idempotent and updates the card", async () => {
      const me = await env.user();
      const found = payloadOf(await env.call(me, "GET", "/api/v1/agent/list?keyword=draft"));
      expect(found.list.map((a: any) => a.nickname)).toEqual(["Writer"]);
      const ids = await seedAssistants(env.node.services.store.db, env.node.services.ids, [
        { account: "helper", nickname: "Helper 2" },
        { account: "coder", nickname: "Coder" },
      ]);
      const again = payloadOf(await env.call(me, "GET", "/api/v1/agent/list?page=2&size=2"));
      expect(again).toMatchObject({ total: 3, page: 2, size: 2 });
      expect(again.list.map((a: any) => a.nickname)).toEqual(["Coder"]);
      expect(again.list[0].user_id).toBe(ids[1]);
      const first = payloadOf(await env.call(me, "GET", "/api/v1/agent/list?size=1"));
      expect(first.list[0]).toMatchObject({ user_id: ids[0], nickname: "Helper 2" });
    });

    test("an AI assistant is reachable without friendship but never over E2EE", async () => {
      const me = await env.user();
      const [ai] = await seedAssistants(env.node.services.store.db, env.node.services.ids, [{ account: "helper" }]);
      const graph = env.node.social.graph;
      expect(await graph.checkC2C(me.id, ai!, { encrypted: false })).toEqual({ ok: true, value: undefined });
      expect(await graph.checkC2C(ai!, me.id, { encrypted: false })).toEqual({ ok: true, value: undefined });
      expect((await graph.checkC2C(me.id, ai!, { encrypted: true })) as unknown).toMatchObject({ ok: false, error: { kind: "permission_denied" } });
      expect((await graph.checkC2C(ai!, me.id, { encrypted: true })) as unknown).toMatchObject({ ok: false, error: { kind: "permission_denied" } });
    });
  });
}
