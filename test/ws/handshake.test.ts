import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { IbisConnection } from "../../src/client/index.ts";
import { users } from "../../src/db/schema/index.ts";
import { CloseCode } from "../../src/ws/index.ts";
import { api, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";
import { connect, createUser, rawHandshake, startWsNode, type TestUser } from "../support/ws.ts";
import type { RecordingEngine } from "../support/ws-engine.ts";

const UPGRADE = { upgrade: "websocket", connection: "Upgrade", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" };

function expectRefusal(res: { status: number; body: any }, status: number, content: RegExp) {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ code: status, payload: { title: expect.any(String), content: expect.stringMatching(content) } });
  expect(typeof res.body.server_ts).toBe("number");
  expect(Object.keys(res.body).sort()).toEqual(["code", "payload", "server_ts"]);
}

for (const kind of storeKinds()) {
  describe(`GET /ws handshake [${kind}]`, () => {
    let node: TestNode;
    let engine: RecordingEngine;
    let alice: TestUser;
    beforeAll(async () => {
      ({ node, engine } = await startWsNode(kind, { tokenClockSkew: 0, accessTokenTtl: 60 }));
      alice = await createUser(node, "alice-phone");
    });
    afterAll(() => node.stop());

    const ws = (headers: Record<string, string>, query = "") => api(node, "GET", `/ws${query}`, { headers: { ...UPGRADE, ...headers } });

    test("missing token → 401 top-level error, no upgrade", async () => {
      expectRefusal(await ws({ "x-device-id": "alice-phone" }), 401, /missing access token/);
    });
    test("forged token → 401", async () => {
      const forged = alice.token.slice(0, -4) + (alice.token.endsWith("AAAA") ? "BBBB" : "AAAA");
      expectRefusal(await ws({ authorization: `Bearer ${forged}`, "x-device-id": "alice-phone" }), 401, /invalid token/);
    });
    test("a refresh token is not an access token → 401", async () => {
      expectRefusal(await ws({ authorization: `Bearer ${alice.refreshtoken}`, "x-device-id": "alice-phone" }), 401, /invalid access token/);
    });
    test("expired token → 401", async () => {
      let t = Date.now() - 3_600_000;
      const { node: old } = await startWsNode(kind, { tokenClockSkew: 0, accessTokenTtl: 60 }, { now: () => t });
      const u = await createUser(old, "d1");
      t = Date.now();
      const res = await api(old, "GET", "/ws", { headers: { ...UPGRADE, authorization: `Bearer ${u.token}`, "x-device-id": "d1" } });
      await old.stop();
      expectRefusal(res, 401, /token expired/);
    });
    test("a deleted account's unexpired token → 401", async () => {
      const gone = await createUser(node, "gone-phone");
      await node.services.store.db.update(users).set({ deletedAt: Date.now() }).where(eq(users.id, gone.userId));
      expectRefusal(await ws({ authorization: `Bearer ${gone.token}`, "x-device-id": "gone-phone" }), 401, /account does not exist/);
    });
    test("device id must match the token's device claim", async () => {
      expectRefusal(await ws({ authorization: `Bearer ${alice.token}`, "x-device-id": "someone-else" }), 401, /does not match/);
    });
    test("missing or malformed device id / type → 401", async () => {
      expectRefusal(await ws({ authorization: `Bearer ${alice.token}` }), 401, /missing device id/);
      expectRefusal(await ws({ authorization: `Bearer ${alice.token}`, "x-device-id": "a,b" }), 401, /invalid device id/);
      expectRefusal(
        await ws({ authorization: `Bearer ${alice.token}`, "x-device-id": "alice-phone", "x-device-type": "toaster" }),
        401,
        /invalid device type/,
      );
    });
    test("a token without device claim accepts any device id", async () => {
      const u = await createUser(node, "");
      const c = await IbisConnection.open({ url: node.url, token: u.token, deviceId: "free-device", protocols: [] });
      const s = engine.opened.at(-1)!;
      expect(s.deviceId).toBe("free-device");
      expect(s.userId).toBe(u.userId);
      await c.close();
    });
    test("the SDK's open rejects when the handshake is refused", async () => {
      await expect(IbisConnection.open({ url: node.url, token: "nope", deviceId: "alice-phone" })).rejects.toThrow(/handshake failed/);
    });
    test("valid token without Upgrade → 400, same shape", async () => {
      const res = await api(node, "GET", "/ws", { token: alice.token, headers: { "x-device-id": "alice-phone" } });
      expectRefusal(res, 400, /WebSocket upgrade/);
    });
    test("a failing account check → 500 in the same shape, whether it fails at once or after a read", async () => {
      const liveness = node.services.accounts.liveness;
      const { known, check } = liveness;
      try {
        liveness.known = () => {
          throw new Error("probe: memory broken");
        };
        expectRefusal(await ws({ authorization: `Bearer ${alice.token}`, "x-device-id": "alice-phone" }), 500, /retry later/);
        liveness.known = () => undefined;
        liveness.check = () => Promise.reject(new Error("probe: store down"));
        expectRefusal(await ws({ authorization: `Bearer ${alice.token}`, "x-device-id": "alice-phone" }), 500, /retry later/);
      } finally {
        Object.assign(liveness, { known, check });
      }
    });
    test("browser query auth: ?token=&did=&dtype=", async () => {
      const c = await connect(node, alice, { queryAuth: true, deviceType: "web", protocols: ["svc-json"] });
      expect(c.protocol).toBe("svc-json");
      const s = engine.opened.at(-1)!;
      expect([s.userId, s.deviceId, s.deviceType]).toEqual([alice.userId, "alice-phone", "web"]);
      await c.close();
      const bad = await api(node, "GET", `/ws?token=${alice.token}&did=other`, { headers: UPGRADE });
      expectRefusal(bad, 401, /does not match/);
    });
  });
}

describe("handshake throttles [pglite]", () => {
  test("per device (after authentication) and per IP (fake clock), lifted by throttleOff", async () => {
    let t = Date.now();
    const { node } = await startWsNode("pglite", { handshakePerDevice: 2, handshakePerIp: 6 }, { now: () => t });
    const u = await createUser(node, "d1");
    // Without the Upgrade header: an authenticated handshake is answered 400 (a real upgrade would hang fetch).
    const hs = (did: string) => api(node, "GET", "/ws", { headers: { authorization: `Bearer ${u.token}`, "x-device-id": did } });
    expect((await hs("x1")).status).toBe(401); // refused for the device mismatch: not charged to the device
    expect((await hs("d1")).status).toBe(400); // authenticated (no real upgrade through fetch): charged
    expect((await hs("d1")).status).toBe(400);
    expectRefusal(await hs("d1"), 429, /this device/);
    expect((await hs("x2")).status).toBe(401);
    expect((await hs("x3")).status).toBe(401);
    expectRefusal(await hs("x4"), 429, /this address/); // 7th from this IP within the minute
    t += 60_000; // both windows over
    expect((await hs("d1")).status).toBe(400);
    await node.stop();

    const { node: off } = await startWsNode("pglite", { handshakePerDevice: 1, handshakePerIp: 1, throttleOff: true });
    const v = await createUser(off, "d1");
    for (let i = 0; i < 4; i++) {
      const r = await api(off, "GET", "/ws", { headers: { ...UPGRADE, authorization: `Bearer ${v.token}`, "x-device-id": "zz" } });
      expect(r.status).toBe(401);
    }
    await off.stop();
  });

  test("handshakes naming someone else's device (no token, or another user's token) never lock it out", async () => {
    const { node } = await startWsNode("pglite", { handshakePerDevice: 3, handshakePerIp: 1000 });
    const victim = await createUser(node, "victim-phone");
    const attacker = await createUser(node, "");
    for (let i = 0; i < 20; i++) {
      expect((await api(node, "GET", "/ws", { headers: { ...UPGRADE, "x-device-id": "victim-phone" } })).status).toBe(401);
    }
    // A token without a device claim is valid for any device id: it is charged to the attacker's (user, device) only.
    const borrowed = [];
    for (let i = 0; i < 5; i++) {
      borrowed.push((await api(node, "GET", "/ws", { headers: { authorization: `Bearer ${attacker.token}`, "x-device-id": "victim-phone" } })).status);
    }
    expect(borrowed).toEqual([400, 400, 400, 429, 429]);
    const c = await connect(node, victim);
    await c.close();
    await node.stop();
  });
});

describe("negotiation over real sockets [pglite]", () => {
  let node: TestNode;
  let u: TestUser;
  beforeAll(async () => {
    ({ node } = await startWsNode("pglite", { throttleOff: true })); // 100+ handshakes of one device
    u = await createUser(node, "neg");
  });
  afterAll(() => node.stop());

  const names = ["svc.v2", "svc-protobuf", "svc-json", "text"];
  // Every subset of the four, each in priority and in reverse order, with and without an unknown one first.
  const offers: string[][] = [];
  for (let mask = 0; mask < 16; mask++) {
    const subset = names.filter((_, i) => mask & (1 << i));
    offers.push(subset, [...subset].reverse(), ["x-unknown", ...subset]);
  }
  const expected = (offer: string[]) => names.find((n) => offer.includes(n));

  test("every offer combination picks by priority; nothing → svc-json without header; only unknown → error + 4102", async () => {
    for (const offer of offers) {
      const want = offer.length === 0 ? "svc-json" : expected(offer);
      const c = await connect(node, u, { protocols: offer });
      if (want) {
        expect({ offer, got: c.protocol }).toEqual({ offer, got: want });
        await c.close();
      } else {
        // only unknown: the first offer is echoed so the client accepts, then a JSON text error and close
        expect(c.protocol).toBe("x-unknown");
        const e = await c.next((e) => e.kind === "conn_error");
        expect(e).toMatchObject({ kind: "conn_error", code: 400, title: "unsupported_protocol" });
        expect((await c.closed).code).toBe(CloseCode.UnsupportedProtocol);
      }
    }
  });

  test("nothing offered: the answer carries no Sec-WebSocket-Protocol", async () => {
    const { sock, head } = await rawHandshake(node, { Authorization: `Bearer ${u.token}`, "X-Device-ID": "neg" });
    sock.destroy();
    expect(head).toStartWith("HTTP/1.1 101");
    expect(head.toLowerCase()).not.toContain("sec-websocket-protocol");
  });
});
