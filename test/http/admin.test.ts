import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Admins } from "../../src/domain/admin/admins.ts";
import { ADMIN_COOKIE } from "../../src/http/admin-auth.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";

const FEATURES_PATH = "/api/adm/admin/config/features";

for (const kind of storeKinds()) {
  describe(`admin API [${kind}]`, () => {
    let node: TestNode;
    let offset = 0;
    const login = async (account: string, pwd: string) => {
      const res = await api(node, "POST", "/api/adm/passport/login", { body: { account, pwd } });
      const cookie = res.headers.get("set-cookie") ?? "";
      return { res, cookie, pair: cookie.split(";")[0]! };
    };

    beforeAll(async () => {
      node = await startTestNode(kind, { adminAccount: "root", adminPassword: "root-password-1", features: '{"moment":false}' }, {
        now: () => Date.now() + offset,
      });
      await new Admins(node.services.store.db, node.services.ids, Date.now).ensure("helpdesk", "helpdesk-pw-1", "support");
    });
    afterAll(() => node.stop());

    test("the first admin from config logs in; the session is a signed HttpOnly cookie", async () => {
      const { res, cookie } = await login("root", "root-password-1");
      expect(res.body.code).toBe(0);
      expect(res.body.payload).toMatchObject({ account: "root", role: "superadmin" });
      expect(res.body.payload.permissions).toContain("settings:view");
      expect(cookie).toContain(`${ADMIN_COOKIE}=`);
      expect(cookie).toMatch(/HttpOnly/i);
      expect(cookie).toMatch(/SameSite=Strict/i);
    });

    test("a wrong admin password is a 401 envelope and sets no cookie", async () => {
      const { res, cookie } = await login("root", "wrong-password");
      expect(res.body.code).toBe(401);
      expect(cookie).toBe("");
    });

    test("features: unauthenticated → 401 JSON; tampered cookie → 401", async () => {
      const none = await api(node, "GET", FEATURES_PATH);
      expect(none.status).toBe(401);
      expect(none.body).toMatchObject({ code: 401, payload: { title: expect.any(String) } });
      const { pair } = await login("root", "root-password-1");
      const [name, value] = pair.split("=") as [string, string];
      // The session id with one character changed: the signature no longer matches.
      const raw = decodeURIComponent(value);
      const tampered = `${name}=${encodeURIComponent((raw[0] === "A" ? "B" : "A") + raw.slice(1))}`;
      expect((await api(node, "GET", FEATURES_PATH, { headers: { cookie: tampered } })).status).toBe(401);
      // A user access token is no admin session.
      const user = await api(node, "POST", "/api/v1/passport/signup", { body: { account: "plainuser", pwd: "secret-1" } });
      expect((await api(node, "GET", FEATURES_PATH, { token: user.body.payload.token })).status).toBe(401);
    });

    test("features: without settings:view → code 403 with an empty payload", async () => {
      const { pair } = await login("helpdesk", "helpdesk-pw-1");
      const res = await api(node, "GET", FEATURES_PATH, { headers: { cookie: pair } });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe(403);
      expect(res.body.payload).toEqual({});
    });

    test("features: with settings:view → the same matrix as the public endpoint", async () => {
      const { pair } = await login("root", "root-password-1");
      const res = await api(node, "GET", FEATURES_PATH, { headers: { cookie: pair } });
      expect(res.body.code).toBe(0);
      expect(res.body.payload.moment).toBe(false);
      expect(res.body.payload).toEqual((await api(node, "GET", "/api/v1/app/features")).body.payload);
    });

    test("a session ends after IBIS_ADMIN_SESSION_TTL", async () => {
      const { pair } = await login("root", "root-password-1");
      offset = node.services.config.adminSessionTtl * 1000 + 1000;
      try {
        expect((await api(node, "GET", FEATURES_PATH, { headers: { cookie: pair } })).status).toBe(401);
      } finally {
        offset = 0;
      }
      expect((await api(node, "GET", FEATURES_PATH, { headers: { cookie: pair } })).status).toBe(200);
    });

    test("a restart does not duplicate or reset the first admin", async () => {
      const admins = new Admins(node.services.store.db, node.services.ids, Date.now);
      expect(await admins.ensure("root", "another-password")).toBe(false);
      expect((await login("root", "root-password-1")).res.body.code).toBe(0);
    });
  });
}
