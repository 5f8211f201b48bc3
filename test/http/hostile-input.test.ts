/**
 * Inputs that used to reach SQL and come back as 500 (issue 14 item 5): huge
 * page numbers and NUL characters. Every one must be a 400 envelope (or, for
 * paging, a clamped page), on both stores.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_JSON_DEPTH } from "../../src/protocol/json.ts";
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

    // JSON nested past MAX_JSON_DEPTH used to parse, be stored, then overflow the stack on stringify (500).
    test.each([
      ["a channel message payload", async () => {
        const ch = await env.call(owner, "POST", "/api/v1/channel/create", { name: "deep", visibility: 0, access_type: 0, join_policy: 0 });
        return `/api/v1/channel/${ch.body.payload.channel_id}/message`;
      }, (deep: string) => `{"content":"x","msg_type":"t","payload":${deep}}`],
      ["a friend request payload", async () => "/api/v1/friend/add", (deep: string) => `{"to":1,"payload":${deep}}`],
    ])("JSON nested 60 000 deep in %s → 400, not a stack overflow", async (_name, path, bodyOf) => {
      const deep = '{"a":'.repeat(60_000) + "1" + "}".repeat(60_000);
      const res = await raw("POST", await path(), bodyOf(deep));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, msg: expect.stringMatching(/nested deeper than \d+/) });
    });

    test("JSON nested to the limit is still accepted", async () => {
      const ch = await env.call(owner, "POST", "/api/v1/channel/create", { name: "deep-ok", visibility: 0, access_type: 0, join_policy: 0 });
      const payload = '{"a":'.repeat(MAX_JSON_DEPTH - 1) + "1" + "}".repeat(MAX_JSON_DEPTH - 1); // the body object is level 1
      const res = await raw("POST", `/api/v1/channel/${ch.body.payload.channel_id}/message`, `{"content":"x","msg_type":"t","payload":${payload}}`);
      expect(res.body.code).toBe(0);
    });

    // Integers: a JSON integer or a decimal string, nothing else (no true, "", [], "0x10", "1e1" coerced to a number).
    test.each([
      ["POST", "/api/v1/e2ee/social/create_shards", { key_version: "0x5", threshold: 2, shards: [] }, /key_version/],
      ["POST", "/api/v1/e2ee/social/create_shards", { key_version: 1, threshold: true, shards: [] }, /threshold/],
      ["POST", "/api/v1/e2ee/trust_event", { target_uid: 1, target_device_id: "d", target_ed25519: "k", from_state: "unverified", to_state: "verified", method: "qr_scan", ts: "", actor_signature: "s" }, /ts/],
      ["GET", "/api/v1/e2ee/social/shards?key_version=1e1", undefined, /key_version/],
      ["GET", "/api/v1/conversation/mine?last_server_ts=0x10", undefined, /last_server_ts/],
      ["GET", "/api/v1/msg/offline?limit=true", undefined, /limit/],
    ])("%s %s: not an integer → 400 naming the field", async (method, path, body, field) => {
      const res = await env.call(owner, method, path, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, msg: expect.stringMatching(field) });
    });

    test.each(["0x5", "1e1", "true"])("channel limit %p is unreadable: the default 20, not read as a number", async (limit) => {
      const res = await raw("GET", `/api/v1/channels/subscribed?limit=${limit}`);
      expect(res.body.payload.limit).toBe(20);
    });

    test.each([[true], ["0x2"], ["1e0"], [[2]], [2.5]])("channel admin role %p is refused (962), not read as a number", async (role) => {
      const other = await env.user();
      const ch = await env.call(owner, "POST", "/api/v1/channel/create", { name: "roles", visibility: 0, access_type: 0, join_policy: 0 });
      const res = await env.call(owner, "POST", `/api/v1/channel/${ch.body.payload.channel_id}/admin`, { user_id: other.id, role });
      expect(res.body.code).toBe(962);
    });

    test.each([["days", "stats/daily?days=0x10"], ["cursor", "messages?cursor=0x1"]])("channel %s as hex → 400", async (field, tail) => {
      const ch = await env.call(owner, "POST", "/api/v1/channel/create", { name: "hex", visibility: 0, access_type: 0, join_policy: 0 });
      const res = await raw("GET", `/api/v1/channel/${ch.body.payload.channel_id}/${tail}`);
      expect(res.status).toBe(400);
      expect(res.body.msg).toMatch(field);
    });

    // Every id is a lookup, a row and a notice: a 1 MiB body of ids used to be one unbounded call (50 000 invitations).
    test.each([
      ["POST", "/api/v1/group/add", (ids: string[]) => ({ member_uids: ids }), /member_uids: must be a list of at most 1000/],
      ["POST", "/api/v1/group_member/join", (ids: string[]) => ({ gid, member_uids: ids }), /member_uids: must be a list of at most 1000/],
    ])("%s %s with 1001 ids → 400", async (method, path, bodyOf, msg) => {
      const ids = Array.from({ length: 1001 }, (_, i) => String(7390000000000000000n + BigInt(i)));
      const res = await env.call(owner, method, path, bodyOf(ids));
      expect(res.status).toBe(400);
      expect(res.body.msg).toMatch(msg);
    });

    test("GET /api/v1/e2ee/social/proxy_keys with 1001 ids → 400", async () => {
      const ids = Array.from({ length: 1001 }, (_, i) => String(i + 1)); // short: Bun answers 431 past ~16 KiB of URL
      const res = await raw("GET", `/api/v1/e2ee/social/proxy_keys?user_ids=${ids.join(",")}`);
      expect(res.status).toBe(400);
      expect(res.body.msg).toMatch(/user_ids: must be a list of at most 1000/);
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
