import { Hono } from "hono";
import type { Services } from "../../services.ts";
import { envelope, json } from "../envelope.ts";

/** GET /health: 200 when the store answers, 503 when it does not (shape: docs/http.md). */
export function healthRoutes(services: Services): Hono {
  const app = new Hono();
  app.get("/health", async (c) => {
    const database = await services.store.ping();
    const payload = { status: database ? "ok" : "degraded", database, node_id: services.nodeId, store: services.store.kind };
    return database
      ? json(c, envelope(0, "success.", payload))
      : json(c, envelope(503, "database unavailable", payload), 503);
  });
  return app;
}
