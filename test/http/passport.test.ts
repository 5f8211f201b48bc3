import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SignJWT } from "jose";
import { and, eq } from "drizzle-orm";
import { ConfigError } from "../../src/config/index.ts";
import { userDevices, users } from "../../src/db/schema/index.ts";
import { TokenService } from "../../src/domain/auth/tokens.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";

const MIN = 60_000;

function expectPreBusiness401(res: { status: number; body: any }) {
  expect(res.status).toBe(401);
  expect(res.body.code).toBe(401);
  expect(typeof res.body.payload.title).toBe("string");
  expect(typeof res.body.payload.content).toBe("string");
  expect(typeof res.body.server_ts).toBe("number");
  expect(res.body.msg).toBeUndefined();
}

for (const kind of storeKinds()) {
  describe(`passport [${kind}]`, () => {
    let node: TestNode;
    /** Tokens signed with the node's key but another clock (skew and expiry). */
    const tokensAt = (offsetMs: number) =>
      new TokenService(
        { secret: node.services.secrets.tokenSecret, accessTtlSec: 3600, refreshTtlSec: 7200, clockSkewSec: 300 },
        () => Date.now() + offsetMs,
      );
    // An authenticated endpoint to probe tokens with.
    const probe = (token: string) => api(node, "POST", "/api/v1/user/cancel_logout", { token });

    beforeAll(async () => {
      node = await startTestNode(kind);
    });
    afterAll(() => node.stop());

    test("signup answers both user-id keys, tokens and the account; the id is exact above 2^53", async () => {
      const res = await api(node, "POST", "/api/v1/passport/signup", {
        body: { account: "Alice", pwd: "secret-1", nickname: "Al" },
        headers: { "X-Device-ID": "phone-1", "X-Device-Type": "ios" },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ code: 0, msg: "success.", payload: { account: "alice", nickname: "Al" } });
      const p = res.body.payload;
      expect(typeof p.uid).toBe("bigint");
      expect(p.uid > 2n ** 53n).toBe(true);
      expect(p.user_id).toBe(p.uid);
      expect(res.text).toContain(`"uid":${p.uid},"user_id":${p.uid}`);
      expect(typeof p.token).toBe("string");
      expect(typeof p.refreshtoken).toBe("string");
      const [device] = await node.services.store.db
        .select()
        .from(userDevices)
        .where(and(eq(userDevices.userId, p.uid), eq(userDevices.deviceId, "phone-1")));
      expect(device).toMatchObject({ deviceType: "ios", status: 1 });
      const [stored] = await node.services.store.db.select().from(users).where(eq(users.id, p.uid));
      expect(stored!.passwordHash.startsWith("$argon2id$")).toBe(true);
    });

    test("signup refuses a taken account (any case) and bad input", async () => {
      const taken = await api(node, "POST", "/api/v1/passport/signup", { body: { account: "ALICE", pwd: "secret-2" } });
      expect(taken.body.code).toBe(409);
      for (const body of [{ account: "al", pwd: "secret-1" }, { account: "bob", pwd: "123" }, { pwd: "secret-1" }]) {
        const res = await api(node, "POST", "/api/v1/passport/signup", { body });
        expect(res.status).toBe(400);
        expect(res.body.code).toBe(400);
      }
      const malformed = await api(node, "POST", "/api/v1/passport/signup", {
        raw: "{nope",
        headers: { "content-type": "application/json" },
      });
      expect(malformed.body.code).toBe(400);
    });

    // The WebSocket handshake refuses these device headers; REST used to accept (and truncate) them, minting
    // tokens for a device that can never connect and merging long ids that share their first 128 characters.
    test.each([
      [{ "X-Device-ID": "a,b" }, /X-Device-ID/],
      [{ "X-Device-ID": "has space" }, /X-Device-ID/],
      [{ "X-Device-ID": "x".repeat(129) }, /X-Device-ID/],
      [{ "X-Device-ID": "d1", "X-Device-Type": "toaster" }, /X-Device-Type/],
    ])("signup and login refuse device headers the handshake refuses: %p → 400", async (headers, msg) => {
      for (const path of ["/api/v1/passport/signup", "/api/v1/passport/login"]) {
        const res = await api(node, "POST", path, { body: { account: "alice", pwd: "secret-1" }, headers });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 400, msg: expect.stringMatching(msg) });
      }
    });

    test("login: same payload; wrong password and unknown account get one generic 401 message", async () => {
      const good = await api(node, "POST", "/api/v1/passport/login", {
        body: { account: "alice", pwd: "secret-1" },
        headers: { "X-Device-ID": "laptop-1", "X-Device-Type": "web" },
      });
      expect(good.body.code).toBe(0);
      expect(good.body.payload).toMatchObject({ account: "alice", nickname: "Al" });
      expect(good.body.payload.uid).toBe(good.body.payload.user_id);
      const claims = await node.services.tokens.verify(good.body.payload.token, "access");
      expect(claims.ok && claims.value.deviceId).toBe("laptop-1");

      const wrongPwd = await api(node, "POST", "/api/v1/passport/login", { body: { account: "alice", pwd: "nope-nope" } });
      const noUser = await api(node, "POST", "/api/v1/passport/login", { body: { account: "mallory", pwd: "secret-1" } });
      for (const r of [wrongPwd, noUser]) {
        expect(r.status).toBe(401);
        expect(r.body.code).toBe(401);
        expect(r.body.payload).toEqual({});
      }
      expect(wrongPwd.body.msg).toBe(noUser.body.msg);
      expect(wrongPwd.body.msg).not.toMatch(/not found|no such|unknown/i);
    });

    test("refresh: header or body; answers a new pair; access tokens are refused there", async () => {
      const login = await api(node, "POST", "/api/v1/passport/login", {
        body: { account: "alice", pwd: "secret-1" },
        headers: { "X-Device-ID": "d9" },
      });
      const { token, refreshtoken } = login.body.payload;
      const viaHeader = await api(node, "POST", "/api/v1/passport/refreshtoken", { headers: { "Refresh-Token": refreshtoken } });
      expect(viaHeader.body.code).toBe(0);
      expect(Object.keys(viaHeader.body.payload).sort()).toEqual(["refreshtoken", "token"]);
      const renewed = await node.services.tokens.verify(viaHeader.body.payload.token, "access");
      expect(renewed.ok && renewed.value.deviceId).toBe("d9");
      expect((await probe(viaHeader.body.payload.token)).body.code).toBe(0);

      // Rotation: the new refresh token works once (body form); the one it replaced is spent.
      const viaBody = await api(node, "POST", "/api/v1/passport/refreshtoken", { body: { refreshtoken: viaHeader.body.payload.refreshtoken } });
      expect(viaBody.body.code).toBe(0);
      expect((await probe(viaBody.body.payload.token)).body.code).toBe(0);

      expectPreBusiness401(await api(node, "POST", "/api/v1/passport/refreshtoken", { headers: { "Refresh-Token": token } }));
      expectPreBusiness401(await api(node, "POST", "/api/v1/passport/refreshtoken", { body: {} }));
    });

    test("rsa_encrypt: true is refused while wrapping is off", async () => {
      const res = await api(node, "POST", "/api/v1/passport/login", {
        body: { account: "alice", pwd: "secret-1", rsa_encrypt: true },
      });
      expect(res.body.code).toBe(400);
    });

    test("a refresh token is refused as an access token", async () => {
      const login = await api(node, "POST", "/api/v1/passport/login", { body: { account: "alice", pwd: "secret-1" } });
      expectPreBusiness401(await probe(login.body.payload.refreshtoken));
      expect((await probe(login.body.payload.token)).body.code).toBe(0);
    });

    test("missing, forged and garbage tokens get the top-level 401", async () => {
      const uid = (await api(node, "POST", "/api/v1/passport/login", { body: { account: "alice", pwd: "secret-1" } })).body
        .payload.uid as bigint;
      const forged = await new SignJWT({ did: "", typ: "access" })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject(uid.toString())
        .setIssuedAt()
        .setExpirationTime("1h")
        .sign(new TextEncoder().encode("not-the-server-key"));
      const unsigned = `${btoa('{"alg":"none"}')}.${btoa(`{"sub":"${uid}","typ":"access"}`)}.`;
      expectPreBusiness401(await api(node, "POST", "/api/v1/user/cancel_logout"));
      for (const t of [forged, unsigned, "garbage"]) expectPreBusiness401(await probe(t));
    });

    test("clock skew: 5 minutes tolerated either way, not more", async () => {
      const uid = (await api(node, "POST", "/api/v1/passport/login", { body: { account: "alice", pwd: "secret-1" } })).body
        .payload.uid as bigint;
      // Issuer clock ahead of ours (iat in our future).
      expect((await probe(await tokensAt(4 * MIN).issue(uid, "", "access"))).body.code).toBe(0);
      expectPreBusiness401(await probe(await tokensAt(6 * MIN).issue(uid, "", "access")));
      // Expired (1 h lifetime) 4 minutes ago: still inside the skew. 6 minutes ago: refused.
      expect((await probe(await tokensAt(-(60 + 4) * MIN).issue(uid, "", "access"))).body.code).toBe(0);
      const expired = await probe(await tokensAt(-(60 + 6) * MIN).issue(uid, "", "access"));
      expectPreBusiness401(expired);
      expect(expired.body.payload.content).toContain("expired");
      // The same rule for refresh tokens.
      const oldRefresh = await tokensAt(-(120 + 6) * MIN).issue(uid, "", "refresh");
      expectPreBusiness401(await api(node, "POST", "/api/v1/passport/refreshtoken", { body: { refreshtoken: oldRefresh } }));
    });
  });

  describe(`passport throttle and RSA wrapping [${kind}]`, () => {
    let node: TestNode;
    beforeAll(async () => {
      node = await startTestNode(kind, { loginPerIp: 4, loginRsa: true });
    });
    afterAll(() => node.stop());

    const wrap = async (pem: string, pwd: string) => {
      const der = Buffer.from(pem.replace(/-----[A-Z ]+-----|\s/g, ""), "base64");
      const key = await crypto.subtle.importKey("spki", der, { name: "RSA-OAEP", hash: "SHA-256" }, false, ["encrypt"]);
      return Buffer.from(await crypto.subtle.encrypt({ name: "RSA-OAEP" }, key, new TextEncoder().encode(pwd))).toString(
        "base64",
      );
    };

    test("init publishes the key; wrapped passwords sign up and log in; plain ones are refused", async () => {
      const init = (await api(node, "GET", "/api/v1/app/init")).body.payload;
      expect(init.login_pwd_rsa_encrypt).toBe(true);
      expect(init.login_rsa_pub_key).toContain("BEGIN PUBLIC KEY");
      const signup = await api(node, "POST", "/api/v1/passport/signup", {
        body: { account: "carol", pwd: await wrap(init.login_rsa_pub_key, "wrapped-pw"), rsa_encrypt: true },
      });
      expect(signup.body.code).toBe(0);
      const login = await api(node, "POST", "/api/v1/passport/login", {
        body: { account: "carol", pwd: await wrap(init.login_rsa_pub_key, "wrapped-pw") },
      });
      expect(login.body.code).toBe(0);
      const plain = await api(node, "POST", "/api/v1/passport/login", { body: { account: "carol", pwd: "wrapped-pw" } });
      expect(plain.body.code).toBe(400);
      const saidPlain = await api(node, "POST", "/api/v1/passport/login", {
        body: { account: "carol", pwd: "wrapped-pw", rsa_encrypt: false },
      });
      expect(saidPlain.body.code).toBe(400);
      expect(saidPlain.body.msg).toContain("RSA");
    });

    test("the fifth call from one IP within a minute is refused with 429", async () => {
      // The previous test made 4 passport calls from 127.0.0.1 in this window.
      const res = await api(node, "POST", "/api/v1/passport/login", { body: { account: "carol", pwd: "x" } });
      expect(res.status).toBe(429);
      expect(res.body.code).toBe(429);
    });

    test("IBIS_THROTTLE_OFF lifts it", async () => {
      const open = await startTestNode(kind, { loginPerIp: 1, throttleOff: true });
      try {
        for (let i = 0; i < 4; i++) {
          const r = await api(open, "POST", "/api/v1/passport/login", { body: { account: "nobody", pwd: "whatever" } });
          expect(r.status).toBe(401);
        }
      } finally {
        await open.stop();
      }
    });
  });

  test(`a bad configured RSA key refuses the start, naming the variable [${kind}]`, async () => {
    const bad = "-----BEGIN PRIVATE KEY-----\nbm90LWEta2V5LXNlY3JldA==\n-----END PRIVATE KEY-----\n";
    let err: unknown;
    try {
      const node = await startTestNode(kind, { loginRsa: true, loginRsaPrivateKey: bad });
      await node.stop();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain("IBIS_LOGIN_RSA_PRIVATE_KEY");
    expect((err as Error).message).not.toContain("bm90LWEta2V5");
  });
}
