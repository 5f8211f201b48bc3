import { Hono } from "hono";
import type { Services } from "../../services.ts";
import { envelope, json } from "../envelope.ts";
import { schema } from "../openapi.ts";

/** GET /health: 200 when the store answers, 503 when it does not (shape: docs/http.md). GET /readyz: readiness. */
export function healthRoutes(services: Services): Hono {
  const app = new Hono();
  app.get("/health", schema({ summary: "Liveness: 200 when the database answers, 503 when it does not" }), async (c) => {
    const database = await services.store.ping();
    const payload = { status: database ? "ok" : "degraded", database, node_id: services.nodeId, store: services.store.kind };
    return database
      ? json(c, envelope(0, "success.", payload))
      : json(c, envelope(503, "database unavailable", payload), 503);
  });
  // Readiness for load balancers (docs/cluster.md): 503 while draining or while Redis is configured but unreachable.
  app.get("/readyz", schema({ summary: "Readiness for load balancers: 503 while draining or while Redis is unreachable" }), (c) => {
    const reason = services.lifecycle.notReady();
    const payload = { status: reason ? "not_ready" : "ready", reason: reason ?? "", node_id: services.nodeId };
    return reason ? json(c, envelope(503, reason, payload), 503) : json(c, envelope(0, "success.", payload));
  });
  return app;
}
