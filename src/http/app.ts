import { Hono } from "hono";
import type { Services } from "../services.ts";
import { envelope, json } from "./envelope.ts";
import { onError } from "./errors.ts";
import type { E2ee } from "../domain/e2ee/index.ts";
import { restBodyLimit } from "./throttle.ts";
import type { Social } from "../domain/social/index.ts";
import type { Channels } from "../domain/channels/index.ts";
import { channelRoutes } from "./routes/channel.ts";
import { Devices } from "../domain/accounts/devices.ts";
import { accountRoutes } from "./routes/account.ts";
import { agentRoutes } from "./routes/agent.ts";
import { conversationRoutes } from "./routes/conversation.ts";
import { e2eeRoutes } from "./routes/e2ee.ts";
import { friendRoutes } from "./routes/friend.ts";
import { groupRoutes } from "./routes/group.ts";
import { mentionRoutes } from "./routes/mention.ts";
import { adminRoutes } from "./routes/admin.ts";
import { healthRoutes } from "./routes/health.ts";
import { attachmentRoutes } from "./routes/attachment.ts";
import { metricsRoutes } from "./routes/metrics.ts";
import { logoutRoutes } from "./routes/logout.ts";
import { msgRoutes } from "./routes/msg.ts";
import { passportRoutes } from "./routes/passport.ts";
import { publicRoutes } from "./routes/public.ts";
import { apiSignature } from "./signature.ts";
import { openApiDocument, referencePage, schema } from "./openapi.ts";

const API_VERSION = "1.0.0";

/** The REST application: one route module per area, one error mapping. */
export function createHttpApp(services: Services, social: Social, e2ee: E2ee, channels: Channels): Hono {
  const app = new Hono();
  app.use("/api/*", restBodyLimit(services.config.restBodyMax));
  // Before every route: with IBIS_API_SIGNATURE on, unsigned or replayed /api/v1/* calls stop here.
  app.use("/api/v1/*", apiSignature(services));
  app.route("/", healthRoutes(services));
  if (services.config.metrics) app.route("/", metricsRoutes(services));
  app.route("/", friendRoutes(services, social));
  app.route("/", groupRoutes(services, social));
  app.route("/", conversationRoutes(services, social));
  app.route("/", mentionRoutes(services, social));
  app.route("/", agentRoutes(services));
  app.route("/", publicRoutes(services));
  app.route("/", passportRoutes(services));
  app.route("/", logoutRoutes(services));
  app.route("/", attachmentRoutes(services));
  // My devices: the account routes list, rename and sign out; E2EE's device destruction signs out too.
  const devices = services.delivery && new Devices({ db: services.store.db, now: services.now, log: services.log, sessions: services.accounts.sessions, cutter: services.sessions, notifier: services.delivery.notifier });
  if (devices) app.route("/", accountRoutes(services, social, devices));
  app.route("/", adminRoutes(services));
  app.route("/", e2eeRoutes(services, e2ee, devices));
  app.route("/", channelRoutes(services, channels));
  if (services.delivery) app.route("/", msgRoutes(services, services.delivery));
  // Generated from the route table on first request, when every route above is registered (docs/http.md).
  let doc: { json: string; html: string } | undefined;
  const described = () => {
    if (doc) return doc;
    const d = openApiDocument(app, { title: "Ibis", version: API_VERSION }, services.config.apiSignature ? "/api/v1/" : undefined);
    return (doc = { json: JSON.stringify(d), html: referencePage(d) });
  };
  app.get("/openapi.json", schema({ summary: "This document (OpenAPI 3.1)" }), (c) => c.body(described().json, 200, { "content-type": "application/json; charset=utf-8" }));
  app.get("/docs", schema({ summary: "API reference page" }), (c) => c.html(described().html));
  app.notFound((c) => json(c, envelope(404, "not found", {}), 404));
  app.onError(onError(services.log));
  return app;
}
