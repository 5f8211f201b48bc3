/**
 * Two nodes sharing one store and one Redis: remote sign-out, suspension and
 * app_upgrade reach sockets on the other node; a revoked token stops there
 * at once although that node remembered it as live (docs/accounts.md).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Admins } from "../../src/domain/admin/admins.ts";
import type { IbisNode } from "../../src/node.ts";
import { CloseCode } from "../../src/ws/close-codes.ts";
import { openSocket, saw, signIn, uniqueAccount, type Signed } from "../support/accounts.ts";
import { startTwoNodes, type TwoNodes } from "../support/cluster.ts";
import { api } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";

for (const kind of storeKinds()) {
  describe(`accounts across two nodes [${kind} + redis]`, () => {
    let nodes: TwoNodes;
    let a: IbisNode, b: IbisNode;
    let adminCookie = "";

    beforeAll(async () => {
      nodes = await startTwoNodes(kind, { passwordMemoryKib: 1024 });
      ({ a, b } = nodes);
      await new Admins(nodes.store.store.db, a.services.ids, Date.now, 1024).ensure("ops", "ops-password-1", "operator");
      const login = await api(a, "POST", "/api/adm/passport/login", { body: { account: "ops", pwd: "ops-password-1" } });
      adminCookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
    });
    afterAll(() => nodes.stop());
    const admin = (path: string, body: unknown) => api(a, "POST", path, { body, headers: { cookie: adminCookie } });
    /** Presence of the device on `node` (its handshake finished and delivery registered it). */
    const present = async (s: Signed, node: IbisNode) => {
      for (let i = 0; i < 200; i++) {
        const at = (await a.services.presence.lookup([s.userId])).get(s.userId)?.find((e) => e.deviceId === s.deviceId);
        if (at?.nodeId === node.services.nodeId) return;
        await Bun.sleep(10);
      }
      throw new Error("device never became present");
    };

    test("remote sign-out on node A closes the right socket on node B and leaves the others; its token stops on B at once", async () => {
      const acct = uniqueAccount("lee");
      const phone = await signIn(a, acct, "l-phone", "ios");
      const desk = await signIn(a, acct, "l-desk", "desktop");
      const tablet = await signIn(a, acct, "l-tab", "android");
      const [phoneWs, deskWs, tabWs] = [await openSocket(a, phone), await openSocket(b, desk, "desktop"), await openSocket(b, tablet, "android")];
      await present(desk, b);
      // Node B now remembers desk's session as live.
      expect((await api(b, "GET", "/api/v1/user/profile", { token: desk.token })).body.code).toBe(0);

      const t0 = Date.now();
      expect((await api(a, "POST", "/api/v1/user/device/signout", { token: phone.token, body: { device_id: "l-desk" } })).body.code).toBe(0);
      expect((await deskWs.nextAction("device_force_offline")).payload).toMatchObject({ reason: "signed_out", device_id: "l-desk", by_device_id: "l-phone" });
      expect((await deskWs.closed).code).toBe(CloseCode.SignedOut);
      expect(Date.now() - t0).toBeLessThan(1000);
      expect((await api(b, "GET", "/api/v1/user/profile", { token: desk.token })).status).toBe(401);
      for (const ws of [phoneWs, tabWs]) expect((await ws.nextAction("device_signed_out")).payload).toMatchObject({ device_id: "l-desk" });
      expect(saw(tabWs, "device_force_offline") || saw(phoneWs, "device_force_offline")).toBe(false);
      expect((await api(b, "GET", "/api/v1/user/profile", { token: tablet.token })).body.code).toBe(0);
      await phoneWs.close();
      await tabWs.close();
    });

    test("logout on node A closes that device's socket on node B; its tokens stop on both", async () => {
      const acct = uniqueAccount("ola");
      const phone = await signIn(a, acct, "o-phone");
      const desk = await signIn(a, acct, "o-desk", "desktop");
      const [phoneWs, deskWs] = [await openSocket(b, phone), await openSocket(b, desk, "desktop")];
      await present(phone, b);
      expect((await api(b, "GET", "/api/v1/user/profile", { token: phone.token })).body.code).toBe(0);
      expect((await api(a, "POST", "/api/v1/passport/logout", { token: phone.token })).body.code).toBe(0);
      expect((await phoneWs.nextAction("device_force_offline")).payload).toMatchObject({ reason: "logout", device_id: "o-phone" });
      expect((await phoneWs.closed).code).toBe(CloseCode.SignedOut);
      for (const node of [a, b]) expect((await api(node, "GET", "/api/v1/user/profile", { token: phone.token })).status).toBe(401);
      expect((await api(b, "GET", "/api/v1/user/profile", { token: desk.token })).body.code).toBe(0);
      expect(saw(deskWs, "device_force_offline")).toBe(false);
      await deskWs.close();
    });

    test("a suspended user is cut everywhere within a second: sockets on both nodes, tokens on both nodes; login refused with 950", async () => {
      const acct = uniqueAccount("mo");
      const phone = await signIn(a, acct, "m-phone", "ios");
      const desk = await signIn(b, acct, "m-desk", "desktop");
      const bystander = await signIn(b, uniqueAccount("ned"), "n-phone");
      const [phoneWs, deskWs, byWs] = [await openSocket(a, phone), await openSocket(b, desk, "desktop"), await openSocket(b, bystander)];
      await present(desk, b);
      for (const [node, s] of [[a, phone], [b, desk]] as const) expect((await api(node, "GET", "/api/v1/user/profile", { token: s.token })).body.code).toBe(0);

      const t0 = Date.now();
      const res = await admin("/api/adm/admin/user/suspend", { user_id: phone.userId, reason: "spam" });
      expect(res.body.payload).toMatchObject({ user_id: phone.userId, suspended_at: expect.any(Number) });
      const closes = await Promise.all([phoneWs.closed, deskWs.closed]);
      if (process.env.IBIS_PRINT_CUT) console.log(`suspension: both sockets closed ${Date.now() - t0} ms after the call was sent`);
      expect(closes.map((c) => c.code)).toEqual([CloseCode.Suspended, CloseCode.Suspended]);
      for (const [node, s] of [[a, phone], [b, desk], [b, phone], [a, desk]] as const) {
        const r = await api(node, "GET", "/api/v1/user/profile", { token: s.token });
        expect(r.status).toBe(401);
        expect(r.body.payload.title).toBe("account_suspended");
      }
      expect(Date.now() - t0).toBeLessThan(1000);
      const login = await api(b, "POST", "/api/v1/passport/login", { body: { account: acct, pwd: "secret-1" } });
      expect(login.body).toMatchObject({ code: 950, msg: "account suspended" });
      expect((await api(b, "POST", "/api/v1/passport/refreshtoken", { body: { refreshtoken: desk.refreshtoken } })).status).toBe(401);
      expect(saw(byWs, "device_force_offline")).toBe(false);

      // Unsuspended: login works again; the old tokens stay revoked.
      expect((await admin("/api/adm/admin/user/unsuspend", { user_id: phone.userId })).body.code).toBe(0);
      const again = await signIn(a, acct, "m-phone");
      expect((await api(b, "GET", "/api/v1/user/profile", { token: again.token })).body.code).toBe(0);
      expect((await api(b, "GET", "/api/v1/user/profile", { token: desk.token })).status).toBe(401);
      await byWs.close();
    });

    test("app_upgrade reaches the chosen platform only, on both nodes", async () => {
      const iosA = await signIn(a, uniqueAccount("ua"), "u-ios-a", "ios");
      const iosB = await signIn(b, uniqueAccount("ub"), "u-ios-b", "ios");
      const droid = await signIn(b, uniqueAccount("uc"), "u-droid", "android");
      const [wsA, wsB, wsD] = [await openSocket(a, iosA, "ios"), await openSocket(b, iosB, "ios"), await openSocket(b, droid, "android")];
      const res = await admin("/api/adm/admin/app_upgrade", { device_type: "ios", min_version: "2.4.0", message: "please update", url: "https://apps.test/ibis" });
      expect(res.body.code).toBe(0);
      for (const ws of [wsA, wsB]) {
        expect((await ws.nextAction("app_upgrade")).payload).toMatchObject({ min_version: "2.4.0", message: "please update", url: "https://apps.test/ibis", device_type: "ios" });
      }
      await Bun.sleep(150);
      expect(saw(wsD, "app_upgrade")).toBe(false);
      for (const ws of [wsA, wsB, wsD]) await ws.close();
    });

    test("a profile change reaches a friend's device on the other node", async () => {
      const ann = await signIn(a, uniqueAccount("ann"), "ann-1");
      const ben = await signIn(b, uniqueAccount("ben"), "ben-1");
      await api(a, "POST", "/api/v1/friend/add", { token: ann.token, body: { to: ben.userId } });
      await api(b, "POST", "/api/v1/friend/confirm", { token: ben.token, body: { from: ann.userId } });
      const benWs = await openSocket(b, ben);
      await present(ben, b);
      await api(a, "POST", "/api/v1/user/profile/update", { token: ann.token, body: { avatar: "https://x.test/ann.png" } });
      expect((await benWs.nextAction("user_profile_changed")).payload).toMatchObject({ user_id: ann.userId, avatar: "https://x.test/ann.png" });
      await benWs.close();
    });
  });
}
