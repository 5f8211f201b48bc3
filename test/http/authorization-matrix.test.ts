/**
 * The authorisation matrix (issue 14): every route of the route table ×
 * {anonymous, other user, non-member, member, owner, admin}, with the expected
 * envelope code in ONE table below. A route missing from the table fails the
 * test by name: a new route gets a row (what to send, what each caller gets).
 *
 * Every row runs on a fresh fixture, the callers in the column order (a
 * mutation by one is seen by the next: `member` leaving before `owner`):
 *   owner      O: owns group G (members O, M), the subject of user-scoped calls (O's device, O's requests)
 *   member     M: member of G, friend of O
 *   nonMember  N: friend of O, not in G
 *   other      U: signed in, neither friend nor member
 *   admin      an admin console session (cookie), no user token
 *   anonymous  nothing
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Hono } from "hono";
import { userDevices } from "../../src/db/schema/index.ts";
import { stringifyJson, parseJson } from "../../src/protocol/json.ts";
import { socialEnv, payloadOf, type SocialEnv, type TestUser } from "./social.support.ts";

const ACTORS = ["anonymous", "other", "nonMember", "member", "owner", "admin"] as const;
type Actor = (typeof ACTORS)[number];

interface Fixture {
  readonly O: TestUser;
  readonly M: TestUser;
  readonly N: TestUser;
  readonly U: TestUser;
  readonly gid: bigint;
  /** §2.8 id of a C2G message of O in G, and of a C2C message O → M. */
  readonly groupMsg: string;
  readonly pairMsg: string;
}

interface Row {
  /** What to send (query for GET, JSON body otherwise); the same for every caller. */
  readonly args?: (f: Fixture) => Record<string, unknown>;
  /** Expected envelope code per caller (HTTP status for routes that answer no envelope). */
  readonly expect: readonly [anonymous: number, other: number, nonMember: number, member: number, owner: number, admin: number];
}

const OPEN = [0, 0, 0, 0, 0, 0] as const;

// prettier-ignore
const MATRIX: Record<string, Row> = {
  // Public pages and bootstrap: open to everyone.
  "GET /account-deletion":                { expect: [200, 200, 200, 200, 200, 200] },
  "GET /privacy-policy":                  { expect: [200, 200, 200, 200, 200, 200] },
  "GET /health":                          { expect: OPEN },
  "GET /readyz":                          { expect: OPEN },
  "GET /api/v1/app/features":             { expect: OPEN },
  "GET /api/v1/app/init":                 { expect: OPEN },
  "GET /api/v1/init":                     { expect: OPEN },
  "GET /docs":                            { expect: [200, 200, 200, 200, 200, 200] },
  "GET /openapi.json":                    { expect: [200, 200, 200, 200, 200, 200] },
  // Open unless IBIS_METRICS_TOKEN is set (then that bearer token only: test/metrics).
  "GET /metrics":                         { expect: [200, 200, 200, 200, 200, 200] },
  // Credentials are the authorisation: a user token or an admin cookie adds nothing (wrong password → 401).
  "POST /api/v1/passport/signup":         { args: () => ({ account: "taken-by-nobody", pwd: "" }), expect: [400, 400, 400, 400, 400, 400] },
  "POST /api/v1/passport/login":          { args: (f) => ({ account: `owner-${f.O.id}`, pwd: "wrong" }), expect: [401, 401, 401, 401, 401, 401] },
  "POST /api/v1/passport/refreshtoken":   { args: (f) => ({ refreshtoken: f.O.token }), expect: [401, 401, 401, 401, 401, 401] },
  "POST /api/adm/passport/login":         { args: () => ({ account: "root", pwd: "wrong" }), expect: [401, 401, 401, 401, 401, 401] },
  "POST /api/adm/passport/logout":        { expect: OPEN },
  // Admin console: the cookie only; a user token is no admin session.
  "GET /api/adm/admin/config/features":   { expect: [401, 401, 401, 401, 401, 0] },
  "GET /api/adm/admin/user/page":         { args: () => ({ keyword: "owner" }), expect: [401, 401, 401, 401, 401, 0] },
  "POST /api/adm/admin/user/suspend":     { args: (f) => ({ user_id: f.U.id }), expect: [401, 401, 401, 401, 401, 0] },
  "POST /api/adm/admin/user/unsuspend":   { args: (f) => ({ user_id: f.U.id }), expect: [401, 401, 401, 401, 401, 0] },
  "POST /api/adm/admin/app_upgrade":      { args: () => ({ device_type: "ios", min_version: "1.0.0" }), expect: [401, 401, 401, 401, 401, 0] },
  "GET /api/adm/admin/audit/page":        { expect: [401, 401, 401, 401, 401, 0] },
  // The caller's own data: any signed-in user, nobody else (an admin cookie is no user).
  "GET /api/v1/agent/list":               { expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/conversation/mine":        { expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/friend/list":              { expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/friend/denylist/page":     { expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/group/page":               { expect: [401, 0, 0, 0, 0, 401] },
  "POST /api/v1/group/add":               { args: () => ({ title: "mine" }), expect: [401, 0, 0, 0, 0, 401] },
  "POST /api/v1/mention/list":            { expect: [401, 0, 0, 0, 0, 401] },
  "POST /api/v1/mention/unread":          { expect: [401, 0, 0, 0, 0, 401] },
  "POST /api/v1/user/cancel_logout":      { expect: [401, 0, 0, 0, 0, 401] },
  "POST /api/v1/passport/logout":         { expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/user/profile":             { expect: [401, 0, 0, 0, 0, 401] },
  "POST /api/v1/user/profile/update":     { args: () => ({ signature: "hello" }), expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/user/search":              { args: () => ({ keyword: "owner" }), expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/user/device/list":         { expect: [401, 0, 0, 0, 0, 401] },
  // Anyone's card (stranger or friend view, docs/accounts.md).
  "GET /api/v1/user/info":                { args: (f) => ({ user_id: f.O.id }), expect: [401, 0, 0, 0, 0, 401] },
  // O's other device: only O may rename or sign it out (anyone else: no such device of theirs, 404).
  "POST /api/v1/user/device/rename":      { args: (f) => ({ device_id: `phone-${f.O.id}`, name: "mine" }), expect: [401, 404, 404, 404, 0, 401] },
  "POST /api/v1/user/device/signout":     { args: (f) => ({ device_id: `phone-${f.O.id}` }), expect: [401, 404, 404, 404, 0, 401] },
  // Naming O's account in a logout request is refused to everyone but O.
  "POST /api/v1/user/apply_logout":       { args: (f) => ({ user_id: f.O.id }), expect: [401, 403, 403, 403, 0, 401] },
  // Group G: members read, owner manages; 943 not_group_member for outsiders.
  "GET /api/v1/group/detail":             { args: (f) => ({ gid: f.gid }), expect: [401, 943, 943, 0, 0, 401] },
  "GET /api/v1/group_member/page":        { args: (f) => ({ gid: f.gid }), expect: [401, 943, 943, 0, 0, 401] },
  "POST /api/v1/group/edit":              { args: (f) => ({ gid: f.gid, title: "renamed" }), expect: [401, 943, 943, 403, 0, 401] },
  "POST /api/v1/group_member/role":       { args: (f) => ({ gid: f.gid, user_id: f.M.id, role: "manager" }), expect: [401, 943, 943, 403, 0, 401] },
  "POST /api/v1/group/dissolve":          { args: (f) => ({ gid: f.gid }), expect: [401, 943, 943, 403, 0, 401] },
  // Adding U: U's own call is a request (self-join is off by default), a non-member may not add anyone, the
  // member's invitation admits U, then U is in (409).
  "POST /api/v1/group_member/join":       { args: (f) => ({ gid: f.gid, member_uids: [f.U.id] }), expect: [401, 0, 943, 0, 409, 401] },
  // The owner cannot leave (dissolve or hand over first).
  "POST /api/v1/group_member/leave":      { args: (f) => ({ gid: f.gid }), expect: [401, 943, 943, 0, 403, 401] },
  "POST /api/v1/mention/suggest":         { args: (f) => ({ gid: f.gid, keyword: "" }), expect: [401, 943, 943, 0, 0, 401] },
  "POST /api/v1/mention/mark_read":       { args: (f) => ({ all: true, gid: f.gid }), expect: [401, 943, 943, 0, 0, 401] },
  // History: group needs membership; a pair is always the caller's own pair with peer_id (O–M's never leaks).
  "GET /api/v1/msg/history":              { args: (f) => ({ chat_type: "c2g", peer_id: f.gid }), expect: [401, 943, 943, 0, 0, 401] },
  "POST /api/v1/msg/read":                { args: (f) => ({ peer_id: f.O.id, msg_id: f.pairMsg }), expect: [401, 0, 0, 0, 0, 401] },
  // O's device: only O may pull or ack for it.
  "GET /api/v1/msg/offline":              { args: (f) => ({ did: `dev-${f.O.id}` }), expect: [401, 403, 403, 403, 0, 401] },
  "POST /api/v1/msg/offline_ack":         { args: (f) => ({ did: `dev-${f.O.id}`, msg_ids: [f.pairMsg] }), expect: [401, 403, 403, 403, 0, 401] },
  // Conversations are per caller: pinning or deleting G's conversation touches the caller's own list only.
  "POST /api/v1/conversation/pin":        { args: (f) => ({ conversation_type: "c2g", conversation_id: f.gid, is_pinned: true }), expect: [401, 943, 943, 0, 0, 401] },
  "POST /api/v1/conversation/delete":     { args: (f) => ({ conversation_type: "c2g", conversation_id: f.gid }), expect: [401, 943, 943, 0, 0, 401] },
  // Attachments: signed-in users only; this fixture has no object store (503 once signed in).
  "GET /api/v1/attachment/presign":       { args: () => ({ filename: "a.txt" }), expect: [401, 503, 503, 503, 503, 401] },
  "POST /api/v1/attachment/complete":     { args: () => ({ attachment_id: 1 }), expect: [401, 503, 503, 503, 503, 401] },
  "GET /api/v1/attachment/url":           { args: () => ({ attachment_id: 1 }), expect: [401, 503, 503, 503, 503, 401] },
  // E2EE: each caller's own keys and shards; O's devices and proxy keys as the e2ee rules allow.
  // Keys are published from a registered, active device only (these tokens name none: 403).
  "POST /api/v1/e2ee/device_keys":        { args: () => ({ ed25519: "AAAA", curve25519: "AAAA", wrap_key: "AAAA", key_signature: "AAAA" }), expect: [401, 403, 403, 403, 403, 401] },
  // O's devices: O's friends and O; a stranger gets 941 not_a_friend.
  "GET /api/v1/e2ee/devices":             { args: (f) => ({ user_id: f.O.id }), expect: [401, 941, 0, 0, 0, 401] },
  "POST /api/v1/e2ee/trust_event":        { expect: [401, 400, 400, 400, 400, 401] },
  // Recovery proxies must be friends: O's key for a stranger or for O itself is refused (941).
  "GET /api/v1/e2ee/social/proxy_keys":   { args: (f) => ({ user_ids: String(f.O.id) }), expect: [401, 941, 0, 0, 941, 401] },
  "POST /api/v1/e2ee/social/create_shards": { expect: [401, 400, 400, 400, 400, 401] },
  "GET /api/v1/e2ee/social/shards":       { args: () => ({ key_version: 1 }), expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/e2ee/social/proxy_shards": { expect: [401, 0, 0, 0, 0, 401] },
  "POST /api/v1/e2ee/social/decrypt_shard": { args: () => ({ shard_id: "1" }), expect: [401, 404, 404, 404, 404, 401] },
  // Channels: the full matrix per access tuple and channel role is test/http/channel-matrix.test.ts. Here, the
  // caller-scoped routes are open to any signed-in user; a literal ":channel_id" is not an id (400).
  "POST /api/v1/channel/create":          { args: () => ({ name: "c", visibility: 0, access_type: 0, join_policy: 0 }), expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/channels/subscribed":      { expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/channels/managed":         { expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/channels/unread/summary":  { expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/channels/search":          { args: () => ({ keyword: "news" }), expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/channels/discover":        { expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/channel/invitations/my":   { expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/channel/invitations/sent": { expect: [401, 0, 0, 0, 0, 401] },
  "GET /api/v1/channel/orders/my":        { expect: [401, 0, 0, 0, 0, 401] },
  "POST /api/v1/channel/invitation/accept": { args: () => ({ invitation_id: 1 }), expect: [401, 968, 968, 968, 968, 401] },
  "POST /api/v1/channel/invitation/reject": { args: () => ({ invitation_id: 1 }), expect: [401, 968, 968, 968, 968, 401] },
  "POST /api/v1/channel/order/pay":       { expect: [401, 963, 963, 963, 963, 401] },
  "POST /api/v1/channel/order/cancel":    { args: () => ({ order_no: "CO1" }), expect: [401, 965, 965, 965, 965, 401] },
  "GET /api/v1/channel/order/:order_no":  { expect: [401, 965, 965, 965, 965, 401] },
  "GET /api/v1/channel/by_custom_id/:custom_id": { expect: [401, 400, 400, 400, 400, 401] },
  "GET /api/v1/channel/:channel_id":      { expect: [401, 400, 400, 400, 400, 401] },
  "PUT /api/v1/channel/:channel_id/update": { expect: [401, 400, 400, 400, 400, 401] },
  "POST /api/v1/channel/:channel_id/update": { expect: [401, 400, 400, 400, 400, 401] },
  "POST /api/v1/channel/:channel_id/delete": { expect: [401, 400, 400, 400, 400, 401] },
  "POST /api/v1/channel/:channel_id/subscribe": { expect: [401, 400, 400, 400, 400, 401] },
  "POST /api/v1/channel/:channel_id/unsubscribe": { expect: [401, 400, 400, 400, 400, 401] },
  "POST /api/v1/channel/:channel_id/message": { args: () => ({ content: "c", msg_type: "text" }), expect: [401, 400, 400, 400, 400, 401] },
  "GET /api/v1/channel/:channel_id/messages": { expect: [401, 400, 400, 400, 400, 401] },
  "POST /api/v1/channel/:channel_id/read": { expect: [401, 400, 400, 400, 400, 401] },
  "POST /api/v1/channel/:channel_id/admin": { args: (f) => ({ user_id: f.M.id, role: 2 }), expect: [401, 400, 400, 400, 400, 401] },
  "DELETE /api/v1/channel/:channel_id/admin/:user_id": { expect: [401, 400, 400, 400, 400, 401] },
  "PUT /api/v1/channel/:channel_id/admin/:user_id/role": { args: () => ({ role: 2 }), expect: [401, 400, 400, 400, 400, 401] },
  "GET /api/v1/channel/:channel_id/admins": { expect: [401, 400, 400, 400, 400, 401] },
  "GET /api/v1/channel/:channel_id/subscribers": { expect: [401, 400, 400, 400, 400, 401] },
  "DELETE /api/v1/channel/:channel_id/subscriber/:user_id": { expect: [401, 400, 400, 400, 400, 401] },
  "GET /api/v1/channel/:channel_id/stats": { expect: [401, 400, 400, 400, 400, 401] },
  "GET /api/v1/channel/:channel_id/stats/daily": { expect: [401, 400, 400, 400, 400, 401] },
  "POST /api/v1/channel/:channel_id/message/:message_id/view": { expect: [401, 400, 400, 400, 400, 401] },
  "POST /api/v1/channel/:channel_id/message/:message_id/reaction": { expect: [401, 400, 400, 400, 400, 401] },
  "DELETE /api/v1/channel/:channel_id/message/:message_id/reaction/:reaction_type": { expect: [401, 400, 400, 400, 400, 401] },
  "PUT /api/v1/channel/:channel_id/message/:message_id/edit": { args: () => ({ content: "c" }), expect: [401, 400, 400, 400, 400, 401] },
  "POST /api/v1/channel/:channel_id/message/:message_id/edit": { args: () => ({ content: "c" }), expect: [401, 400, 400, 400, 400, 401] },
  "POST /api/v1/channel/:channel_id/message/:message_id/revoke": { expect: [401, 400, 400, 400, 400, 401] },
  "POST /api/v1/channel/:channel_id/invitation": { args: (f) => ({ invitee_uid: f.M.id }), expect: [401, 400, 400, 400, 400, 401] },
  "POST /api/v1/channel/:channel_id/order": { expect: [401, 400, 400, 400, 400, 401] },
  // The request U → O: only O can answer it (anyone else has no request from U: 404).
  "POST /api/v1/friend/confirm":          { args: (f) => ({ from: f.U.id }), expect: [401, 404, 404, 404, 0, 401] },
  "POST /api/v1/friend/reject":           { args: (f) => ({ from: f.U.id }), expect: [401, 404, 404, 404, 0, 401] },
  "POST /api/v1/friend/add":              { args: (f) => ({ to: f.O.id }), expect: [401, 0, 409, 409, 400, 401] },
  // Friendship and denylist are the caller's own: deleting O–M is only O's (or M's) business.
  "POST /api/v1/friend/delete":           { args: (f) => ({ uid: f.M.id }), expect: [401, 404, 404, 404, 0, 401] },
  "POST /api/v1/friend/denylist/add":     { args: (f) => ({ denied_user_id: f.M.id }), expect: [401, 0, 0, 400, 0, 401] },
  "POST /api/v1/friend/denylist/remove":  { args: (f) => ({ denied_user_id: f.M.id }), expect: [401, 404, 404, 404, 404, 401] },
};

describe("authorisation matrix [pglite]", () => {
  let env: SocialEnv;
  let app: Hono;
  let adminCookie = "";
  beforeAll(async () => {
    env = await socialEnv("pglite", { throttleOff: true, adminAccount: "root", adminPassword: "root-password-1" });
    app = env.node.http; // the node's own REST application and route table
    const login = await app.request("/api/adm/passport/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ account: "root", pwd: "root-password-1" }),
    }, { ip: "127.0.0.1" });
    adminCookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
    expect(adminCookie).toContain("ibis_admin=");
  });
  afterAll(() => env.stop());

  async function fixture(): Promise<Fixture> {
    const [O, M, N, U] = await Promise.all(["owner", "member", "friend", "stranger"].map((n) => env.user(n))) as [TestUser, TestUser, TestUser, TestUser];
    for (const f of [M, N]) {
      payloadOf(await env.call(O, "POST", "/api/v1/friend/add", { to: f.id }));
      payloadOf(await env.call(f, "POST", "/api/v1/friend/confirm", { from: O.id }));
    }
    const g = payloadOf(await env.call(O, "POST", "/api/v1/group/add", { title: "g", member_uids: [M.id] }));
    const gid = BigInt(g.group.gid);
    const now = Date.now();
    const groupMsg = (await env.storeMessage({ chatType: "C2G", from: O.id, to: gid, payload: { text: `hi @${M.nickname}` }, serverTs: now })).clientId;
    const pairMsg = (await env.storeMessage({ chatType: "C2C", from: O.id, to: M.id, payload: { text: "hi" }, serverTs: now })).clientId;
    // A second device of O, registered as a login with X-Device-ID would (my-devices rows: rename, sign-out).
    await env.node.services.store.db.insert(userDevices).values({ userId: O.id, deviceId: `phone-${O.id}`, deviceType: "ios" });
    // A pending request to O from the stranger: confirm/reject by O succeed, by anyone else find nothing.
    payloadOf(await env.call(U, "POST", "/api/v1/friend/add", { to: O.id }));
    return { O, M, N, U, gid, groupMsg, pairMsg };
  }

  async function call(method: string, path: string, actor: Actor, f: Fixture, args: Record<string, unknown>): Promise<number> {
    const user = { anonymous: undefined, other: f.U, nonMember: f.N, member: f.M, owner: f.O, admin: undefined }[actor];
    const headers: Record<string, string> = {};
    if (user) headers.authorization = `Bearer ${user.token}`;
    if (actor === "admin") headers.cookie = adminCookie;
    let url = path;
    let body: string | undefined;
    if (method === "GET") {
      const q = new URLSearchParams(Object.entries(args).map(([k, v]): [string, string] => [k, typeof v === "string" ? v : stringifyJson(v)]));
      if ([...q].length) url += `?${q}`;
    } else {
      body = stringifyJson(args);
      headers["content-type"] = "application/json";
    }
    const res = await app.request(url, { method, headers, body }, { ip: `10.0.0.${ACTORS.indexOf(actor) + 1}` });
    const text = await res.text();
    try {
      const env = parseJson(text) as { code?: unknown };
      if (typeof env?.code === "number") return env.code;
    } catch {
      // not JSON (HTML pages)
    }
    return res.status;
  }

  const routes = () => [...new Set(app.routes.filter((r) => r.method !== "ALL").map((r) => `${r.method} ${r.path}`))].sort();

  test("every route of the route table has a row", () => {
    const missing = routes().filter((r) => !(r in MATRIX));
    const stale = Object.keys(MATRIX).filter((r) => !routes().includes(r));
    if (missing.length) throw new Error(`routes without a row in MATRIX (test/http/authorization-matrix.test.ts): ${missing.join(", ")}`);
    if (stale.length) throw new Error(`rows of MATRIX for routes that no longer exist: ${stale.join(", ")}`);
  });

  test("each caller gets the expected answer", async () => {
    const observed: Record<string, number[]> = {};
    for (const route of routes()) {
      const [method, path] = route.split(" ") as [string, string];
      const f = await fixture();
      const args = MATRIX[route]?.args?.(f) ?? {};
      const got: number[] = [];
      for (const actor of ACTORS) got.push(await call(method, path, actor, f, args));
      observed[route] = got;
    }
    const wrong = Object.entries(observed)
      .filter(([route, got]) => MATRIX[route] && stringifyJson(MATRIX[route]!.expect) !== stringifyJson(got))
      .map(([route, got]) => `${route}: expected [${MATRIX[route]!.expect.join(", ")}], got [${got.join(", ")}]`);
    if (process.env.IBIS_MATRIX_PRINT) for (const [r, g] of Object.entries(observed)) console.log(`  "${r}": { expect: [${g.join(", ")}] },`);
    expect(wrong).toEqual([]);
  }, 120_000);
});
