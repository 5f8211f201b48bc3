import { Hono } from "hono";
import type { Services } from "../services.ts";
import { envelope, json } from "./envelope.ts";
import { onError } from "./errors.ts";
import { restBodyLimit } from "./throttle.ts";
import type { Social } from "../domain/social/index.ts";
import { agentRoutes } from "./routes/agent.ts";
import { conversationRoutes } from "./routes/conversation.ts";
import { friendRoutes } from "./routes/friend.ts";
import { groupRoutes } from "./routes/group.ts";
import { mentionRoutes } from "./routes/mention.ts";
import { adminRoutes } from "./routes/admin.ts";
import { healthRoutes } from "./routes/health.ts";
import { logoutRoutes } from "./routes/logout.ts";
import { msgRoutes } from "./routes/msg.ts";
import { passportRoutes } from "./routes/passport.ts";
import { publicRoutes } from "./routes/public.ts";
import { apiSignature } from "./signature.ts";

/** The REST application: one route module per area, one error mapping. */
export function createHttpApp(services: Services, social: Social): Hono {
  const app = new Hono();
  app.use("/api/*", restBodyLimit(services.config.restBodyMax));
  // Before every route: with IBIS_API_SIGNATURE on, unsigned or replayed /api/v1/* calls stop here.
  app.use("/api/v1/*", apiSignature(services));
  app.route("/", healthRoutes(services));
  app.route("/", friendRoutes(services, social));
  app.route("/", groupRoutes(services, social));
  app.route("/", conversationRoutes(services, social));
  app.route("/", mentionRoutes(services, social));
  app.route("/", agentRoutes(services));
  app.route("/", publicRoutes(services));
  app.route("/", passportRoutes(services));
  app.route("/", logoutRoutes(services));
  app.route("/", adminRoutes(services));
  if (services.delivery) app.route("/", msgRoutes(services, services.delivery));
  app.notFound((c) => json(c, envelope(404, "not found", {}), 404));
  app.onError(onError(services.log));
  return app;
}
