/**
 * Inputs that used to reach SQL and come back as 500 (issue 14 item 5): huge
 * page numbers and NUL characters. Every one must be a 400 envelope (or, for
 * paging, a clamped page), on both stores.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";
import { socialEnv, type SocialEnv, type TestUser } from "./social.support.ts";

const HUGE = "99999999999999999999";

for (const kind of storeKinds()) {
  describe(`hostile REST input [${kind}]`, () => {
    let env: SocialEnv;
    let owner: TestUser;
    let gid: bigint;
    beforeAll(async () => {
      env = await socialEnv(kind);
      owner = await env.user("owner");
      const g = await env.call(owner, "POST", "/api/v1/group/add", { title: "g" });
      gid = BigInt(g.body.payload.group.gid);
    });
    afterAll(() => env.stop());

    const raw = (method: string, path: string, text?: string) =>
      api(env.node, method, path, { token: owner.token, ...(text !== undefined ? { raw: text, headers: { "content-type": "application/json" } } : {}) });

    test.each([
      ["GET", `/api/v1/group/page?page=${HUGE}`],
      ["GET", `/api/v1/agent/list?page=${HUGE}`],
      ["GET", `/api/v1/friend/denylist/page?page=${HUGE}&size=${HUGE}`],
    ])("%s %s: clamped, an empty page, not a 500", async (method, path) => {
      const res = await raw(method, path);
      expect(res.status).toBe(200);
      expect(res.body.payload.list).toEqual([]);
    });

    test("group_member/page and mention/list with absurd pages (query and JSON 1e300)", async () => {
      const members = await raw("GET", `/api/v1/group_member/page?gid=${gid}&page=${HUGE}`);
      expect(members.status).toBe(200);
      expect(members.body.payload.list).toEqual([]);
      const mentions = await raw("POST", "/api/v1/mention/list", '{"page":1e300,"size":1e300}');
      expect(mentions.status).toBe(200);
      expect(mentions.body.payload.list).toEqual([]);
    });

    const NUL = "a\u0000b";
    test.each([
      ["POST", "/api/v1/group/edit", () => ({ gid, title: NUL })],
      ["POST", "/api/v1/group/add", () => ({ title: NUL })],
      ["POST", "/api/v1/user/apply_logout", () => ({ reason: NUL })],
      ["POST", "/api/v1/friend/add", () => ({ to: "1\u00002" })],
      ["POST", "/api/v1/friend/add", () => ({ to: 5, payload: { [NUL]: 1 } })],
      ["POST", "/api/v1/mention/suggest", () => ({ gid, keyword: NUL })],
      ["POST", "/api/v1/msg/offline_ack", () => ({ msg_ids: [`C2C.1.2.${NUL}`] })],
      ["POST", "/api/v1/passport/signup", () => ({ account: "nul-user", password: "Secret123!", nickname: NUL })],
      ["POST", "/api/v1/passport/login", () => ({ account: NUL, password: "x" })],
    ])("NUL in %s %s → 400 naming the field", async (method, path, body) => {
      const res = await env.call(owner, method, path, body());
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, msg: expect.stringMatching(/NUL/) });
    });

    test.each([
      `/api/v1/agent/list?keyword=${encodeURIComponent(NUL)}`,
      `/api/v1/msg/offline?did=${encodeURIComponent(NUL)}`,
      `/api/v1/msg/history?chat_type=c2g&peer_id=1&before_id=${encodeURIComponent(NUL)}`,
    ])("NUL in the query of GET %s → 400", async (path) => {
      const res = await raw("GET", path);
      expect(res.status).toBe(400);
      expect(res.body.msg).toMatch(/NUL/);
    });
  });
}
