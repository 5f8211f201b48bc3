import { Hono, type Context } from "hono";
import { z } from "zod";
import { deviceOf } from "../../domain/auth/rules.ts";
import { fail, ok as okResult, unwrap, type Result } from "../../domain/errors.ts";
import type { Services } from "../../services.ts";
import { unauthorized, type AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { body } from "../params.ts";
import { schema, valid } from "../openapi.ts";
import { perIpThrottle } from "../throttle.ts";
import { userIdKeys } from "../user-id.ts";
import { zBool } from "../zod.ts";

const Credentials = z.object({
  account: z.string({ error: "account is required" }),
  pwd: z.string({ error: "pwd is required" }),
  nickname: z.string().optional(),
  rsa_encrypt: zBool.optional(),
});

/** Sign-up, login and token refresh (spec §5; endpoints and shapes in docs/auth.md). */
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

  const device = (c: Context) => deviceOf(c.req.header("x-device-id"), c.req.header("x-device-type"));

  async function session(c: Context, account: { userId: bigint; account: string; nickname: string }, deviceId: string) {
    const pair = await tokens.pair(account.userId, deviceId);
    return ok(c, { ...userIdKeys(account.userId), ...pair, nickname: account.nickname, account: account.account });
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

  app.post("/api/v1/passport/refreshtoken", async (c) => {
    const fromBody = (await body(c)).refreshtoken;
    const token = c.req.header("refresh-token") || (typeof fromBody === "string" ? fromBody : "");
    if (!token) return unauthorized(c, "missing refresh token");
    const claims = await tokens.verify(token, "refresh");
    if (!claims.ok) return unauthorized(c, claims.error.msg);
    if (!(await accounts.isActive(claims.value.userId))) return unauthorized(c, "account no longer exists");
    return ok(c, await tokens.pair(claims.value.userId, claims.value.deviceId));
  });

  return app;
}
