import { Hono, type Context } from "hono";
import { featuresFromConfig } from "../../domain/features/matrix.ts";
import { encryptInit } from "../../domain/init/init-cipher.ts";
import { initData } from "../../domain/init/init-data.ts";
import { stringifyJson } from "../../protocol/json.ts";
import type { Services } from "../../services.ts";
import type { AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { accountDeletionPage, privacyPolicyPage } from "./pages.ts";
import { schema } from "../openapi.ts";

/** Public endpoints (spec §4.1, §5.5): no login. Init is public too: a client needs the RSA key before it logs in. */
export function publicRoutes(services: Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { config } = services;
  const features = featuresFromConfig(config.features);
  // ws_url never comes from the request's Host header (a forged one would be echoed to clients):
  // IBIS_PUBLIC_WS_URL, else the node's own address (src/node.ts passes it as the `wsUrl` binding).
  const init = (c: Context<AppEnv>) =>
    initData({
      wsUrl: config.publicWsUrl || (c.env?.wsUrl ?? ""),
      uploadUrl: config.publicUploadUrl,
      rsaPublicKeyPem: services.loginRsa?.publicKeyPem,
    });

  app.get("/privacy-policy", (c) => c.html(privacyPolicyPage()));
  app.get("/account-deletion", (c) => c.html(accountDeletionPage(config.logoutGraceDays)));
  app.get("/api/v1/app/features", schema({ summary: "Feature matrix (§2.5)" }), (c) => ok(c, features));
  app.get("/api/v1/app/init", schema({ summary: "Init data in plain JSON (§2.2)" }), (c) => ok(c, init(c)));
  app.get("/api/v1/init", schema({ summary: "Init data, AES-256-CBC encrypted as payload.res (docs/auth.md)" }), async (c) =>
    ok(c, { res: await encryptInit(config.initSecret, stringifyJson(init(c))) }),
  );
  return app;
}
