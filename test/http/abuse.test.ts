/**
 * Amplification through REST (issue 14 item 4): group management and friend
 * requests store and fan out notices, so they are throttled per user; a
 * rejected request cannot be re-sent at once; request payloads and bodies are capped.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RESEND_AFTER_REJECT_MS } from "../../src/domain/social/friends.ts";
import { api } from "../support/node.ts";
import { socialEnv, type SocialEnv, type TestUser } from "./social.support.ts";

describe("REST abuse limits [pglite]", () => {
  let env: SocialEnv;
  let t = Date.now();
  let a: TestUser;
  beforeAll(async () => {
    env = await socialEnv("pglite", { groupOpsPerMin: 4, friendRequestsPerMin: 4, stateWritesPerMin: 2, restBodyMax: 64 * 1024, groupSelfJoin: true }, () => t);
    a = await env.user("a");
  });
  afterAll(() => env.stop());

  test("group management: a per-user budget across join/leave, refilled after the minute", async () => {
    const b = await env.user("b");
    const g = await env.call(a, "POST", "/api/v1/group/add", { title: "g" });
    const gid = g.body.payload.group.gid;
    const codes = [];
    for (let i = 0; i < 5; i++) codes.push((await env.call(b, "POST", `/api/v1/group_member/${i % 2 ? "leave" : "join"}`, { gid })).body.code);
    expect(codes).toEqual([0, 0, 0, 0, 429]);
    t += 60_000;
    expect((await env.call(b, "POST", "/api/v1/group_member/join", { gid })).body.code).toBe(0);
  });

  test("friend requests: a per-user budget; a rejected request cannot be re-sent for a day", async () => {
    t += 60_000;
    const others = await Promise.all([1, 2, 3, 4, 5].map((i) => env.user(`f${i}`)));
    const codes = [];
    for (const o of others) codes.push((await env.call(a, "POST", "/api/v1/friend/add", { to: o.id })).body.code);
    expect(codes).toEqual([0, 0, 0, 0, 429]);
    t += 60_000;
    const h = others[0]!;
    expect((await env.call(h, "POST", "/api/v1/friend/reject", { from: a.id })).body.code).toBe(0);
    const again = await env.call(a, "POST", "/api/v1/friend/add", { to: h.id });
    expect(again.body).toMatchObject({ code: 429, msg: expect.stringMatching(/declined/) });
    t += RESEND_AFTER_REJECT_MS + 1;
    expect((await env.call(a, "POST", "/api/v1/friend/add", { to: h.id })).body.code).toBe(0);
  });

  // Small state writes store a row or fan out to the caller's devices: each area keeps a per-user budget too.
  test.each([
    ["POST", "/api/v1/msg/read", (u: TestUser) => ({ peer_id: u.id, msg_id: "C2C.1.2.abc" })],
    ["POST", "/api/v1/msg/offline_ack", () => ({ msg_ids: ["C2C.1.2.abc"] })],
    ["POST", "/api/v1/conversation/pin", (u: TestUser) => ({ conversation_type: "c2c", conversation_id: u.id, is_pinned: true })],
    ["POST", "/api/v1/conversation/delete", (u: TestUser) => ({ conversation_type: "c2c", conversation_id: u.id })],
    ["POST", "/api/v1/mention/mark_read", () => ({ all: true })],
    ["POST", "/api/v1/user/apply_logout", () => ({})],
    ["POST", "/api/v1/user/cancel_logout", () => ({})],
  ])("%s %s: IBIS_STATE_WRITES_PER_MIN per user (429 over it)", async (method, path, bodyOf) => {
    const [me, peer] = [await env.user(), await env.user()];
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await env.call(me, method, path, bodyOf(peer))).body.code);
    expect(codes.slice(0, 2).every((c) => c !== 429)).toBe(true);
    expect(codes[2]).toBe(429);
  });

  test("a request payload is capped at a few KiB; a REST body at IBIS_REST_BODY_MAX (413)", async () => {
    t += 60_000;
    const o = await env.user("payload");
    const big = await env.call(a, "POST", "/api/v1/friend/add", { to: o.id, payload: { note: "x".repeat(5000) } });
    expect(big.body).toMatchObject({ code: 400, msg: expect.stringMatching(/payload/) });
    const huge = await api(env.node, "POST", "/api/v1/group/add", { token: a.token, body: { title: "y".repeat(100 * 1024) } });
    expect(huge.status).toBe(413);
    expect(huge.body.code).toBe(413);
  });
});
