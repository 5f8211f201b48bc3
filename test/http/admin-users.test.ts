/** The admin side of users: list and search, suspend/unsuspend, app_upgrade, permissions, audit rows (docs/accounts.md). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Admins } from "../../src/domain/admin/admins.ts";
import { signIn, uniqueAccount } from "../support/accounts.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";

for (const kind of storeKinds()) {
  describe(`admin users [${kind}]`, () => {
    let node: TestNode;
    const cookies: Record<string, string> = {};
    const as = (who: string, method: string, path: string, body?: unknown) =>
      api(node, method, path, { headers: { cookie: cookies[who]! }, ...(body === undefined ? {} : { body }) });

    beforeAll(async () => {
      node = await startTestNode(kind, { adminAccount: "root", adminPassword: "root-password-1", heartbeatInterval: 60_000 });
      const admins = new Admins(node.services.store.db, node.services.ids, Date.now, 1024);
      await admins.ensure("ops", "ops-password-1", "operator");
      await admins.ensure("help", "help-password-1", "support");
      for (const [who, pwd] of [["root", "root-password-1"], ["ops", "ops-password-1"], ["help", "help-password-1"]] as const) {
        const res = await api(node, "POST", "/api/adm/passport/login", { body: { account: who, pwd } });
        cookies[who] = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
      }
    });
    afterAll(() => node.stop());

    test("list and search: by id, account or nickname prefix, by state; paged, newest first", async () => {
      const tag = `adm${Date.now().toString(36)}`;
      const x = await signIn(node, `${tag}x`, "x1", "ios", "Xavier");
      const y = await signIn(node, `${tag}y`, "y1", "ios", "Yolanda");
      const page = (await as("help", "GET", `/api/adm/admin/user/page?keyword=${tag}&size=1`)).body.payload;
      expect(page).toMatchObject({ total: 2, page: 1, size: 1 });
      expect(page.list[0]).toMatchObject({ user_id: y.userId, uid: y.userId, account: `${tag}y`, state: "active", suspended_at: null });
      expect((await as("help", "GET", `/api/adm/admin/user/page?keyword=${x.userId}`)).body.payload.list.map((u: any) => u.user_id)).toContain(x.userId);
      expect((await as("help", "GET", "/api/adm/admin/user/page?keyword=yolan")).body.payload.list.map((u: any) => u.user_id)).toContain(y.userId);
      expect((await as("help", "GET", "/api/adm/admin/user/page?state=frozen")).body.code).toBe(400);
      expect((await api(node, "GET", "/api/adm/admin/user/page")).status).toBe(401);
    });

    test("suspend and unsuspend need users:edit, are idempotent, and leave one audit row each (who, what, whom)", async () => {
      const z = await signIn(node, uniqueAccount("zed"), "z1");
      expect((await as("help", "POST", "/api/adm/admin/user/suspend", { user_id: z.userId })).body).toMatchObject({ code: 403, payload: {} });
      const first = await as("ops", "POST", "/api/adm/admin/user/suspend", { uid: String(z.userId), reason: "abuse" });
      expect(first.body.payload).toMatchObject({ user_id: z.userId, uid: z.userId });
      const again = await as("ops", "POST", "/api/adm/admin/user/suspend", { user_id: z.userId });
      expect(again.body.payload.suspended_at).toBe(first.body.payload.suspended_at);
      expect((await as("help", "GET", `/api/adm/admin/user/page?keyword=${z.userId}&state=suspended`)).body.payload.total).toBe(1);
      expect((await as("ops", "POST", "/api/adm/admin/user/unsuspend", { user_id: z.userId })).body.code).toBe(0);
      expect((await as("ops", "POST", "/api/adm/admin/user/suspend", { user_id: 1 })).body.code).toBe(940);
      expect((await as("ops", "POST", "/api/adm/admin/user/suspend", {})).body.code).toBe(400);

      // The audit page needs admins:manage (superadmin).
      expect((await as("ops", "GET", "/api/adm/admin/audit/page")).body.code).toBe(403);
      const audit = (await as("root", "GET", `/api/adm/admin/audit/page?user_id=${z.userId}`)).body.payload;
      expect(audit.total).toBe(2);
      expect(audit.list.map((r: any) => r.action)).toEqual(["user.unsuspend", "user.suspend"]);
      expect(audit.list[1]).toMatchObject({ admin_account: "ops", target_user_id: z.userId, detail: { reason: "abuse" }, created_at: expect.any(Number) });
    });

    test("app_upgrade: needs broadcast:send, checks its input, is audited", async () => {
      const body = { device_type: "android", min_version: "3.0.0", message: "new", url: "https://apps.test/x" };
      expect((await as("help", "POST", "/api/adm/admin/app_upgrade", body)).body.code).toBe(403);
      expect((await as("ops", "POST", "/api/adm/admin/app_upgrade", body)).body.payload).toMatchObject({ ...body, sent_at: expect.any(Number) });
      for (const bad of [{ ...body, device_type: "fridge" }, { ...body, min_version: "" }, { ...body, url: "ftp://x" }]) {
        expect((await as("ops", "POST", "/api/adm/admin/app_upgrade", bad)).body.code).toBe(400);
      }
      const audit = (await as("root", "GET", "/api/adm/admin/audit/page?size=50")).body.payload;
      expect(audit.list.some((r: any) => r.action === "app_upgrade" && r.detail.min_version === "3.0.0")).toBe(true);
    });

    test("admin writes are throttled per admin", async () => {
      const limited = await startTestNode(kind, { adminAccount: "root", adminPassword: "root-password-1", accountWritesPerMin: 2 });
      try {
        const login = await api(limited, "POST", "/api/adm/passport/login", { body: { account: "root", pwd: "root-password-1" } });
        const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
        const body = { device_type: "web", min_version: "1.0.0" };
        const codes = [];
        for (let i = 0; i < 3; i++) codes.push((await api(limited, "POST", "/api/adm/admin/app_upgrade", { body, headers: { cookie } })).body.code);
        expect(codes).toEqual([0, 0, 429]);
      } finally {
        await limited.stop();
      }
    });
  });
}
