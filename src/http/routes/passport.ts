import { Hono, type Context } from "hono";
import { z } from "zod";
import { deviceOf } from "../../domain/auth/rules.ts";
import { fail, ok as okResult, unwrap, type Result } from "../../domain/errors.ts";
import type { Services } from "../../services.ts";
import { currentUser, requireUser, unauthorized, type AppEnv } from "../auth.ts";
import { VERDICT_REFUSAL } from "../../domain/auth/liveness.ts";
import type { RefreshRefusal } from "../../domain/auth/sessions.ts";
import { ok } from "../envelope.ts";
import { schema, valid } from "../openapi.ts";
import { perIpThrottle } from "../throttle.ts";
import { userIdKeys } from "../user-id.ts";
import { zAsSent, zBool } from "../zod.ts";

const Credentials = z.object({
  account: z.string({ error: "account is required" }),
  pwd: z.string({ error: "pwd is required" }),
  nickname: z.string().optional(),
  rsa_encrypt: zBool.optional(),
});

// The refresh-token header wins; the body field is the fallback (a non-string there counts as absent).
const Refresh = z.object({ refreshtoken: zAsSent("refresh token, when the refresh-token header is absent") });

const REFRESH_REFUSAL: Record<RefreshRefusal["reason"], readonly [title: string, content: string]> = {
  gone: VERDICT_REFUSAL.gone,
  suspended: VERDICT_REFUSAL.suspended,
  revoked: ["unauthorized", "refresh token revoked or already used: sign in again"],
  reused: ["unauthorized", "refresh token already used: the session is revoked, sign in again"],
};

/** Sign-up, login, token refresh and logout (spec §5; endpoints and shapes in docs/auth.md). */
export function passportRoutes(services: Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { accounts, tokens, loginRsa } = services;
  app.use("/api/v1/passport/*", perIpThrottle(services, services.config.loginPerIp));

  // When the server publishes an RSA key (init login_pwd_rsa_encrypt), pwd is always wrapped.
  async function plainPassword(pwd: string, rsaEncrypt: boolean | undefined): Promise<Result<string>> {
    if (loginRsa) {
      if (rsaEncrypt === false) return fail("bad_request", "login_pwd_rsa_encrypt is on: pwd must be RSA-wrapped");
      return loginRsa.unwrap(pwd);
    }
    if (rsaEncrypt === true) return fail("bad_request", "RSA password wrapping is off on this server");
    return okResult(pwd);
  }

  const device = (c: Context) => unwrap(deviceOf(c.req.header("x-device-id"), c.req.header("x-device-type")));

  async function session(c: Context, account: { userId: bigint; account: string; nickname: string }, deviceId: string) {
    const { token, refreshtoken } = await accounts.sessions.start(account.userId, deviceId);
    return ok(c, { ...userIdKeys(account.userId), token, refreshtoken, nickname: account.nickname, account: account.account });
  }

  app.post("/api/v1/passport/signup", schema({ summary: "Sign up (X-Device-ID, X-Device-Type optional)", body: Credentials }), async (c) => {
    const req = valid(c, Credentials);
    const pwd = unwrap(await plainPassword(req.pwd, req.rsa_encrypt));
    const dev = device(c);
    const account = unwrap(await accounts.signup({ account: req.account, pwd, nickname: req.nickname }, dev));
    return session(c, account, dev.deviceId);
  });

  app.post("/api/v1/passport/login", schema({ summary: "Log in", body: Credentials }), async (c) => {
    const req = valid(c, Credentials);
    const pwd = unwrap(await plainPassword(req.pwd, req.rsa_encrypt));
    const dev = device(c);
    const account = unwrap(await accounts.login({ account: req.account, pwd }, dev));
    return session(c, account, dev.deviceId);
  });

  app.post("/api/v1/passport/refreshtoken", schema({ summary: "New token pair from a refresh token (header refresh-token, or body)", body: Refresh }), async (c) => {
    const fromBody = valid(c, Refresh).refreshtoken;
    const token = c.req.header("refresh-token") || (typeof fromBody === "string" ? fromBody : "");
    if (!token) return unauthorized(c, "missing refresh token");
    const claims = await tokens.verify(token, "refresh");
    if (!claims.ok) return unauthorized(c, claims.error.msg);
    const { userId, deviceId } = claims.value;
    const r = await accounts.sessions.refresh(claims.value);
    if (r.ok) return ok(c, { token: r.pair.token, refreshtoken: r.pair.refreshtoken });
    const { refusal } = r;
    // Reuse revoked the session: its sockets go too, wherever they are.
    if (refusal.reason === "reused") services.sessions.cut({ userId, deviceId, belowGen: refusal.gen, reason: "token_reuse" });
    const [title, content] = REFRESH_REFUSAL[refusal.reason];
    return unauthorized(c, content, title);
  });

  // Logout of this device: every token of its session stops working and its sockets close, on every node.
  app.post("/api/v1/passport/logout", requireUser(services), schema({ summary: "Log out this device: its tokens revoked, its sockets closed 4104 on every node" }), async (c) => {
    const { userId, deviceId } = currentUser(c);
    const gen = await accounts.sessions.revoke(userId, deviceId);
    services.sessions.cut({ userId, deviceId, belowGen: gen, reason: "logout" });
    return ok(c, { ...userIdKeys(userId), device_id: deviceId });
  });

  return app;
}
