import { Hono } from "hono";
import { featuresFromConfig } from "../../domain/features/matrix.ts";
import { encryptInit } from "../../domain/init/init-cipher.ts";
import { initData, wsUrlFor } from "../../domain/init/init-data.ts";
import { stringifyJson } from "../../protocol/json.ts";
import type { Services } from "../../services.ts";
import type { AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { accountDeletionPage, privacyPolicyPage } from "./pages.ts";

/** Public endpoints (spec §4.1, §5.5): no login. Init is public too: a client needs the RSA key before it logs in. */
export function publicRoutes(services: Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { config } = services;
  const features = featuresFromConfig(config.features);
  const init = (url: string, proto: string | undefined) =>
    initData({
      wsUrl: config.publicWsUrl || wsUrlFor(url, proto),
      uploadUrl: config.publicUploadUrl,
      rsaPublicKeyPem: services.loginRsa?.publicKeyPem,
    });

  app.get("/privacy-policy", (c) => c.html(privacyPolicyPage()));
  app.get("/account-deletion", (c) => c.html(accountDeletionPage(config.logoutGraceDays)));
  app.get("/api/v1/app/features", (c) => ok(c, features));
  app.get("/api/v1/app/init", (c) => ok(c, init(c.req.url, c.req.header("x-forwarded-proto"))));
  app.get("/api/v1/init", async (c) =>
    ok(c, { res: await encryptInit(config.initSecret, stringifyJson(init(c.req.url, c.req.header("x-forwarded-proto")))) }),
  );
  return app;
}
