/**
 * Every REST route from the route table, fuzzed with bodies and queries built
 * from the parameter names the routes read (issue 14): whatever arrives, the
 * answer is an envelope, never a 500. Seeded like the protocol fuzz
 * (IBIS_FUZZ_SEED, IBIS_FUZZ_RUNS; docs/reliability.md).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { Hono } from "hono";
import { stringifyJson } from "../../src/protocol/json.ts";
import { socialEnv, type SocialEnv, type TestUser } from "./social.support.ts";

const SEED = Number(process.env.IBIS_FUZZ_SEED ?? 1414);
const RUNS = Number(process.env.IBIS_FUZZ_RUNS ?? 2000) / 100; // per route: 20 in CI

const KEYS = [
  "gid", "group_id", "uid", "user_id", "to", "from", "page", "size", "title", "avatar", "introduction", "payload",
  "msg_ids", "member_uids", "keyword", "did", "chat_type", "peer_id", "msg_id", "before_id", "limit", "role",
  "is_read", "all", "mention_id", "reason", "account", "pwd", "nickname", "refreshtoken", "attr", "denied_user_id", "pinned",
  // channels, E2EE, accounts, attachments
  "name", "visibility", "access_type", "join_policy", "tags", "price", "currency", "custom_id", "content", "msg_type",
  "request_id", "reaction_type", "cursor", "days", "channel_id", "message_id", "invitee_uid", "invitation_id", "order_no",
  "key_version", "threshold", "shards", "user_ids", "shard_id", "ts", "target_uid", "target_device_id", "device_id",
  "filename", "attachment_id", "conversation_type", "conversation_id", "is_pinned", "searchable_by", "category",
];
// Path parameters (":channel_id", ":order_no"…) get these instead of a real value.
const PATH_VALUES = ["abc", "-1", "0", "1", "1.5", "1e300", "99999999999999999999", "18446744073709551616", "%00", "a%00b", "%E0%A4%A", "like", "CO1"];
const value = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom("99999999999999999999", "1e300", "-1", "a\u0000b", "", "C2C.1.2.abc", "c2g", "true"),
  fc.constantFrom(1e300, -1, 0, 2 ** 63, Number.MAX_SAFE_INTEGER),
  fc.bigInt({ min: -(1n << 64n), max: 1n << 64n }),
);
const args = fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 6 });

describe("fuzz: every REST route answers an envelope, never a 500 [pglite]", () => {
  let env: SocialEnv;
  let user: TestUser;
  let app: Hono;
  beforeAll(async () => {
    env = await socialEnv("pglite", { throttleOff: true });
    user = await env.user("fuzzer");
    app = env.node.http; // the node's own REST application and route table
  });
  afterAll(() => env.stop());

  test("route table × random parameters (query for GET, JSON body otherwise)", async () => {
    const routes = [...new Map(app.routes.filter((r) => r.method !== "ALL" && !r.path.includes("*")).map((r) => [`${r.method} ${r.path}`, r])).values()];
    expect(routes.length).toBeGreaterThan(20);
    const fails: string[] = [];
    for (const r of routes) {
      await fc.assert(
        fc.asyncProperty(args, fc.boolean(), fc.constantFrom(...PATH_VALUES), async (a, signed, segment) => {
          const headers: Record<string, string> = signed ? { authorization: `Bearer ${user.token}` } : {};
          let url = r.path.replace(/:[a-z_]+/g, segment);
          let body: string | undefined;
          if (r.method === "GET") {
            const q = new URLSearchParams(Object.entries(a).map(([k, v]): [string, string] => [k, typeof v === "string" ? v : stringifyJson(v)]));
            url += `?${q}`;
          } else {
            body = stringifyJson(a);
            headers["content-type"] = "application/json";
          }
          const res = await app.request(url, { method: r.method, headers, body }, { ip: "127.0.0.1" });
          if (res.status === 500) fails.push(`${r.method} ${url} ${body ?? ""} → ${res.status}`);
          return res.status !== 500; // 503 is a deliberate answer (an unconfigured object store), not a crash
        }),
        { seed: SEED, numRuns: RUNS },
      ).catch(() => {});
    }
    expect(fails).toEqual([]);
  }, 120_000);
});

describe("JSON nested past MAX_JSON_DEPTH, on every route that reads a body [pglite]", () => {
  let env: SocialEnv;
  let user: TestUser;
  beforeAll(async () => {
    env = await socialEnv("pglite", { throttleOff: true });
    user = await env.user("deep");
  });
  afterAll(() => env.stop());

  test("400 (or the route's refusal before the body), never a 500 or a stack overflow", async () => {
    const app = env.node.http;
    const routes = [...new Set(app.routes.filter((r) => r.method === "POST" || r.method === "PUT").map((r) => `${r.method} ${r.path.replace(/:[a-z_]+/g, "1")}`))];
    const deep = `{"payload":${'{"a":'.repeat(60_000)}1${"}".repeat(60_000)}}`;
    const fails: string[] = [];
    for (const route of routes) {
      const [method, path] = route.split(" ") as [string, string];
      const res = await app.request(path, { method, headers: { authorization: `Bearer ${user.token}`, "content-type": "application/json" }, body: deep }, { ip: "127.0.0.1" });
      if (res.status >= 500 && res.status !== 503) fails.push(`${route} → ${res.status}`);
    }
    expect(fails).toEqual([]);
  }, 60_000);
});
