import { Hono } from "hono";
import type { Services } from "../services.ts";
import { envelope, json } from "./envelope.ts";
import { onError } from "./errors.ts";
import { healthRoutes } from "./routes/health.ts";
import { msgRoutes } from "./routes/msg.ts";

/** The REST application: one route module per area, one error mapping. */
export function createHttpApp(services: Services): Hono {
  const app = new Hono();
  app.route("/", healthRoutes(services));
  if (services.delivery) app.route("/", msgRoutes(services, services.delivery));
  app.notFound((c) => json(c, envelope(404, "not found", {}), 404));
  app.onError(onError(services.log));
  return app;
}
