/** Profiles, finding people, my devices, logout and refresh rotation over HTTP and real sockets (docs/accounts.md, docs/auth.md). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { IbisApi } from "../../src/client/rest.ts";
import { Admins } from "../../src/domain/admin/admins.ts";
import { CloseCode } from "../../src/ws/close-codes.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";
import { openSocket, saw, signIn, uniqueAccount, type Signed } from "../support/accounts.ts";

for (const kind of storeKinds()) {
  describe(`accounts [${kind}]`, () => {
    let node: TestNode;
    const call = (s: Signed | undefined, method: string, path: string, body?: unknown) =>
      api(node, method, path, { ...(s ? { token: s.token } : {}), ...(body === undefined ? {} : { body }) });

    beforeAll(async () => {
      node = await startTestNode(kind, { heartbeatInterval: 60_000, adminAccount: "root", adminPassword: "root-password-1" });
    });
    afterAll(() => node.stop());

    test("profile: mine, update (checked), and the stranger vs friend view of another user", async () => {
      const alice = await signIn(node, uniqueAccount("alice"), "a-phone", "ios", "Alice");
      const bob = await signIn(node, uniqueAccount("bob"), "b-phone");
      const mine = await call(alice, "GET", "/api/v1/user/profile");
      expect(mine.body.payload).toMatchObject({ user_id: alice.userId, uid: alice.userId, nickname: "Alice", signature: "", searchable_by: "everyone" });

      const upd = await call(alice, "POST", "/api/v1/user/profile/update", { nickname: " Alice A. ", signature: "hello", avatar: "https://x.test/a.png" });
      expect(upd.body.payload).toMatchObject({ nickname: "Alice A.", signature: "hello", avatar: "https://x.test/a.png" });
      for (const bad of [{ nickname: "" }, { nickname: "x".repeat(65) }, { avatar: "javascript:alert(1)" }, { signature: "a\nb" }, { searchable_by: "friends" }]) {
        expect((await call(alice, "POST", "/api/v1/user/profile/update", bad)).body.code).toBe(400);
      }

      const stranger = await call(bob, "GET", `/api/v1/user/info?user_id=${alice.userId}`);
      expect(stranger.body.payload).toEqual({ user_id: alice.userId, uid: alice.userId, nickname: "Alice A.", avatar: "https://x.test/a.png", account_type: 0, is_friend: false });
      await call(bob, "POST", "/api/v1/friend/add", { to: alice.userId });
      await call(alice, "POST", "/api/v1/friend/confirm", { from: bob.userId });
      const friend = await call(bob, "GET", `/api/v1/user/info?uid=${alice.userId}`);
      expect(friend.body.payload).toMatchObject({ is_friend: true, signature: "hello", account: expect.stringMatching(/^alice/) });
      expect((await call(bob, "GET", "/api/v1/user/info?user_id=1")).body.code).toBe(940);
      expect((await call(bob, "GET", "/api/v1/user/info")).body.code).toBe(400);
    });

    test("a profile change reaches friends' devices and my other devices as S2C user_profile_changed, not strangers", async () => {
      const carol = await signIn(node, uniqueAccount("carol"), "c-phone");
      const carolDesk = await signIn(node, (await call(carol, "GET", "/api/v1/user/profile")).body.payload.account, "c-desk", "desktop");
      const dan = await signIn(node, uniqueAccount("dan"), "d-phone");
      const eve = await signIn(node, uniqueAccount("eve"), "e-phone");
      await call(dan, "POST", "/api/v1/friend/add", { to: carol.userId });
      await call(carol, "POST", "/api/v1/friend/confirm", { from: dan.userId });
      const [danWs, eveWs, deskWs, phoneWs] = await Promise.all([openSocket(node, dan), openSocket(node, eve), openSocket(node, carolDesk, "desktop"), openSocket(node, carol)]);
      await call(carol, "POST", "/api/v1/user/profile/update", { nickname: "Caroline" });
      for (const ws of [danWs, deskWs]) {
        const n = await ws.nextAction("user_profile_changed");
        expect(n.payload).toMatchObject({ user_id: carol.userId, uid: carol.userId, nickname: "Caroline" });
      }
      await Bun.sleep(150);
      expect(saw(eveWs, "user_profile_changed")).toBe(false);
      expect(saw(phoneWs, "user_profile_changed")).toBe(false); // the device that made the change
      // An update that changes nothing visible tells no one.
      await call(carol, "POST", "/api/v1/user/profile/update", { searchable_by: "account" });
      await Bun.sleep(150);
      expect(saw(danWs, "user_profile_changed")).toBe(false); // the first one was taken above
      for (const ws of [danWs, eveWs, deskWs, phoneWs]) await ws.close();
    });

    test("search: exact account and nickname prefix, paged; 'account' and 'nobody' are never listed beyond what they allow", async () => {
      const tag = `zq${Date.now().toString(36)}`;
      const open = await signIn(node, `${tag}open`, "o1", "ios", `${tag}Open`);
      const byAccount = await signIn(node, `${tag}acct`, "o2", "ios", `${tag}Acct`);
      const hidden = await signIn(node, `${tag}hide`, "o3", "ios", `${tag}Hide`);
      const pct = await signIn(node, `${tag}pct`, "o4", "ios", `${tag}%under_`);
      await call(byAccount, "POST", "/api/v1/user/profile/update", { searchable_by: "account" });
      await call(hidden, "POST", "/api/v1/user/profile/update", { searchable_by: "nobody" });
      const me = await signIn(node, uniqueAccount("seeker"), "s1");
      const search = async (keyword: string, extra = "") =>
        (await call(me, "GET", `/api/v1/user/search?keyword=${encodeURIComponent(keyword)}${extra}`)).body.payload;

      const byPrefix = await search(tag.toUpperCase());
      expect(byPrefix.list.map((u: any) => u.user_id).sort()).toEqual([open.userId, pct.userId].sort());
      expect(byPrefix.total).toBe(2);
      expect(byPrefix.list[0]).not.toHaveProperty("account"); // a nickname hit shows no account
      expect((await search(`${tag}acct`)).list).toEqual([
        { user_id: byAccount.userId, uid: byAccount.userId, nickname: `${tag}Acct`, avatar: "", account_type: 0, is_friend: false, matched: "account" },
      ]);
      expect((await search(`${tag}hide`)).total).toBe(0);
      expect((await search(`${tag}Hid`)).total).toBe(0);
      // LIKE wildcards in the keyword match themselves.
      expect((await search(`${tag}%`)).list.map((u: any) => u.user_id)).toEqual([pct.userId]);
      expect((await search(`${tag}_`)).total).toBe(0);
      // Paging: the account hit first, then nickname hits; size is capped at 50.
      const p1 = await search(`${tag}open`, "&size=1&page=1");
      expect(p1).toMatchObject({ total: 1, page: 1, size: 1 });
      expect((await search(tag, "&size=1&page=2")).list).toHaveLength(1);
      expect((await search(tag, "&size=5000")).size).toBe(50);
      expect((await call(me, "GET", "/api/v1/user/search?keyword=")).body.code).toBe(400);
      expect((await call(undefined, "GET", `/api/v1/user/search?keyword=${tag}`)).status).toBe(401);
    });

    test("search is rate-limited per user", async () => {
      const limited = await startTestNode(kind, { searchPerMin: 2 });
      try {
        const u = await signIn(limited, uniqueAccount("rl"), "r1");
        const codes = [];
        for (let i = 0; i < 3; i++) codes.push((await api(limited, "GET", "/api/v1/user/search?keyword=abc", { token: u.token })).body.code);
        expect(codes).toEqual([0, 0, 429]);
      } finally {
        await limited.stop();
      }
    });

    test("my devices: list with type, name, trust, signed-in and online; rename; someone else's device is not found", async () => {
      const acct = uniqueAccount("frank");
      const phone = await signIn(node, acct, "f-phone", "ios");
      const desk = await signIn(node, acct, "f-desk", "desktop");
      const ws = await openSocket(node, desk, "desktop");
      await Bun.sleep(50);
      const list = (await call(phone, "GET", "/api/v1/user/device/list")).body.payload;
      expect(list.user_id).toBe(phone.userId);
      const byId = Object.fromEntries(list.list.map((d: any) => [d.device_id, d]));
      expect(byId["f-phone"]).toMatchObject({ device_type: "ios", name: "", trust_state: "unverified", signed_in: true, online: false, current: true });
      expect(byId["f-desk"]).toMatchObject({ device_type: "desktop", signed_in: true, online: true, current: false });
      expect(typeof byId["f-desk"].last_seen_at).toBe("number");

      expect((await call(phone, "POST", "/api/v1/user/device/rename", { device_id: "f-desk", name: "Office PC" })).body.payload).toEqual({ device_id: "f-desk", name: "Office PC" });
      const other = await signIn(node, uniqueAccount("gina"), "g-phone");
      expect((await call(other, "POST", "/api/v1/user/device/rename", { device_id: "f-desk", name: "mine now" })).body.code).toBe(404);
      expect((await call(other, "POST", "/api/v1/user/device/signout", { device_id: "f-desk" })).body.code).toBe(404);
      expect((await call(phone, "POST", "/api/v1/user/device/rename", { device_id: "f-desk", name: "a\u0000b" })).body.code).toBe(400);
      await ws.close();
    });

    test("remote sign-out: the device's tokens stop, its socket hears device_force_offline and closes 4104; the others are told and keep working", async () => {
      const acct = uniqueAccount("hank");
      const phone = await signIn(node, acct, "h-phone", "ios");
      const desk = await signIn(node, acct, "h-desk", "desktop");
      const [phoneWs, deskWs] = await Promise.all([openSocket(node, phone), openSocket(node, desk, "desktop")]);
      const res = await call(phone, "POST", "/api/v1/user/device/signout", { device_id: "h-desk" });
      expect(res.body.payload).toMatchObject({ user_id: phone.userId, device_id: "h-desk" });
      const notice = await deskWs.nextAction("device_force_offline");
      expect(notice.payload).toMatchObject({ reason: "signed_out", device_id: "h-desk", by_device_id: "h-phone" });
      expect((await deskWs.closed).code).toBe(CloseCode.SignedOut);
      expect((await phoneWs.nextAction("device_signed_out")).payload).toMatchObject({ device_id: "h-desk", by_device_id: "h-phone" });

      expect((await call(desk, "GET", "/api/v1/user/profile")).status).toBe(401);
      const refresh = await api(node, "POST", "/api/v1/passport/refreshtoken", { body: { refreshtoken: desk.refreshtoken } });
      expect(refresh.status).toBe(401);
      await expect(openSocket(node, desk, "desktop")).rejects.toThrow();
      expect((await call(phone, "GET", "/api/v1/user/profile")).body.code).toBe(0);
      const devices = (await call(phone, "GET", "/api/v1/user/device/list")).body.payload.list;
      expect(devices.find((d: any) => d.device_id === "h-desk").signed_in).toBe(false);
      // Signing in again on that device works, with new tokens.
      const again = await signIn(node, acct, "h-desk", "desktop");
      expect((await call(again, "GET", "/api/v1/user/profile")).body.code).toBe(0);
      await phoneWs.close();
    });

    test("logout: this device's tokens stop and its sockets close 4104; another device of the user is untouched", async () => {
      const acct = uniqueAccount("ivy");
      const phone = await signIn(node, acct, "i-phone");
      const desk = await signIn(node, acct, "i-desk", "desktop");
      const [phoneWs, deskWs] = await Promise.all([openSocket(node, phone), openSocket(node, desk, "desktop")]);
      expect((await call(phone, "POST", "/api/v1/passport/logout")).body.payload).toMatchObject({ user_id: phone.userId, device_id: "i-phone" });
      expect((await phoneWs.nextAction("device_force_offline")).payload).toMatchObject({ reason: "logout" });
      expect((await phoneWs.closed).code).toBe(CloseCode.SignedOut);
      expect((await call(phone, "GET", "/api/v1/user/profile")).status).toBe(401);
      expect((await api(node, "POST", "/api/v1/passport/refreshtoken", { body: { refreshtoken: phone.refreshtoken } })).status).toBe(401);
      expect((await call(desk, "GET", "/api/v1/user/profile")).body.code).toBe(0);
      await Bun.sleep(100);
      expect(saw(deskWs, "device_force_offline")).toBe(false);
      await deskWs.close();
    });

    test("refresh rotation: each refresh token works once; a reused one revokes the whole session and closes its socket", async () => {
      const s = await signIn(node, uniqueAccount("jack"), "j-phone");
      const ws = await openSocket(node, s);
      const first = await api(node, "POST", "/api/v1/passport/refreshtoken", { headers: { "Refresh-Token": s.refreshtoken } });
      expect(first.body.code).toBe(0);
      const second = await api(node, "POST", "/api/v1/passport/refreshtoken", { body: { refreshtoken: first.body.payload.refreshtoken } });
      expect(second.body.code).toBe(0);
      // The first refresh token again: reuse. The session ends: every token of it, and its socket.
      const reuse = await api(node, "POST", "/api/v1/passport/refreshtoken", { body: { refreshtoken: s.refreshtoken } });
      expect(reuse.status).toBe(401);
      expect(reuse.body.payload.content).toMatch(/already used/);
      expect((await ws.nextAction("device_force_offline")).payload).toMatchObject({ reason: "token_reuse" });
      expect((await ws.closed).code).toBe(CloseCode.SignedOut);
      for (const t of [s.token, first.body.payload.token, second.body.payload.token]) {
        expect((await api(node, "GET", "/api/v1/user/profile", { token: t })).status).toBe(401);
      }
      expect((await api(node, "POST", "/api/v1/passport/refreshtoken", { body: { refreshtoken: second.body.payload.refreshtoken } })).status).toBe(401);
    });

    test("a token presented on an open socket must be of the socket's session and pass the check", async () => {
      const acct = uniqueAccount("lou");
      const phone = await signIn(node, acct, "lou-phone");
      const ws = await openSocket(node, phone);
      const deviceLess = (await api(node, "POST", "/api/v1/passport/login", { body: { account: acct, pwd: "secret-1" } })).body.payload.token;
      expect(await ws.refresh(deviceLess)).toMatchObject({ action: "invalid_message", payload: { reason: "invalid_token", content: "token of another session" } });
      const fresh = await api(node, "POST", "/api/v1/passport/refreshtoken", { body: { refreshtoken: phone.refreshtoken } });
      expect((await ws.refresh(fresh.body.payload.token)).action).toBe("token_refreshed");
      // Signed out from another device: the socket closes and the refreshed token (old generation) is refused too.
      const stale = fresh.body.payload.token;
      const other = await signIn(node, acct, "lou-desk", "desktop");
      expect((await api(node, "POST", "/api/v1/user/device/signout", { token: other.token, body: { device_id: "lou-phone" } })).body.code).toBe(0);
      expect((await ws.closed).code).toBe(CloseCode.SignedOut);
      expect((await api(node, "GET", "/api/v1/user/profile", { token: stale })).status).toBe(401);
      await ws.close();
    });

    test("SDK: concurrent refreshes share one rotation (no reuse); profile, search and devices; logout ends the session", async () => {
      const sdk = new IbisApi({ url: node.url, deviceId: "sdk-phone", deviceType: "ios" });
      await sdk.signup(uniqueAccount("sdk"), "secret-1", "Sdk User");
      const first = sdk.session!.refreshToken;
      await Promise.all([sdk.refresh(), sdk.refresh()]);
      expect(sdk.session!.refreshToken).not.toBe(first);
      await sdk.refresh(); // the rotated one works: the session was not revoked
      expect((await sdk.updateProfile({ signature: "hi" })).signature).toBe("hi");
      expect((await sdk.profile()).nickname).toBe("Sdk User");
      expect((await sdk.devices()).map((d) => [d.device_id, d.current])).toEqual([["sdk-phone", true]]);
      const token = sdk.token!;
      await sdk.logout();
      expect(sdk.session).toBeUndefined();
      expect((await api(node, "GET", "/api/v1/user/profile", { token })).status).toBe(401);
    });

    test("account deletion closes the account's sockets (4106)", async () => {
      const s = await signIn(node, uniqueAccount("kim"), "k-phone");
      const ws = await openSocket(node, s);
      await call(s, "POST", "/api/v1/user/apply_logout", {});
      await node.services.store.rows(
        (await import("drizzle-orm")).sql`update account_logout set delete_after_at = 0 where user_id = ${s.userId}`,
      );
      await node.sweepLogouts();
      expect((await ws.nextAction("device_force_offline")).payload).toMatchObject({ reason: "account_deleted" });
      expect((await ws.closed).code).toBe(CloseCode.AccountDeleted);
    });

    test("admin logout ends the session server-side: the old cookie no longer works", async () => {
      await new Admins(node.services.store.db, node.services.ids, Date.now).ensure("root", "root-password-1");
      const login = await api(node, "POST", "/api/adm/passport/login", { body: { account: "root", pwd: "root-password-1" } });
      const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
      const features = () => api(node, "GET", "/api/adm/admin/config/features", { headers: { cookie } });
      expect((await features()).body.code).toBe(0);
      expect((await api(node, "POST", "/api/adm/passport/logout", { headers: { cookie } })).body.code).toBe(0);
      expect((await features()).status).toBe(401);
    });
  });
}
