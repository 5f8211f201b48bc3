import { timingSafeEqual } from "node:crypto";
import { Hono } from "hono";
import { metrics } from "../../metrics/index.ts";
import type { Services } from "../../services.ts";
import { bearer, unauthorized } from "../auth.ts";
import { schema } from "../openapi.ts";

const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** GET /metrics: Prometheus text format; with IBIS_METRICS_TOKEN, only for that bearer token. */
export function metricsRoutes(services: Services): Hono {
  const app = new Hono();
  const token = services.config.metricsToken;
  app.get("/metrics", schema({ summary: "Prometheus metrics (text format; bearer IBIS_METRICS_TOKEN when set)" }), (c) => {
    if (token && !same(bearer(c.req.header("authorization")) ?? "", token)) return unauthorized(c, "metrics token required");
    return c.body(metrics.registry.render(), 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
  });
  return app;
}
