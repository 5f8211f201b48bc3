import { Hono } from "hono";
import type { Services } from "../services.ts";
import { envelope, json } from "./envelope.ts";
import { onError } from "./errors.ts";
import { adminRoutes } from "./routes/admin.ts";
import { healthRoutes } from "./routes/health.ts";
import { logoutRoutes } from "./routes/logout.ts";
import { passportRoutes } from "./routes/passport.ts";
import { publicRoutes } from "./routes/public.ts";

/** The REST application: one route module per area, one error mapping. */
export function createHttpApp(services: Services): Hono {
  const app = new Hono();
  app.route("/", healthRoutes(services));
  app.route("/", publicRoutes(services));
  app.route("/", passportRoutes(services));
  app.route("/", logoutRoutes(services));
  app.route("/", adminRoutes(services));
  app.notFound((c) => json(c, envelope(404, "not found", {}), 404));
  app.onError(onError(services.log));
  return app;
}
