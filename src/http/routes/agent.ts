import { Hono } from "hono";
import { z } from "zod";
import { listAssistants } from "../../domain/social/index.ts";
import type { Services } from "../../services.ts";
import { requireUser, type AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { parsePage, paged } from "../paging.ts";
import { params } from "../params.ts";
import { schema, valid } from "../openapi.ts";

const keywordQuery = z.object({
  keyword: z.string().trim().max(64).optional(),
  page: z.string().optional(),
  size: z.string().optional().describe("default 10, at most 1000"),
});

/** AI assistants (§2.9, §4.1): size defaults to 10 (§8). */
export function agentRoutes(services: Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("/api/v1/agent/*", requireUser(services));

  app.get("/api/v1/agent/list", schema({ summary: "AI assistants, paged (§2.9)", query: keywordQuery }), async (c) => {
    const page = parsePage(await params(c), 10);
    const { keyword } = valid(c, keywordQuery);
    const { total, list } = await listAssistants(services.store.db, { offset: page.offset, limit: page.size, keyword });
    return ok(c, paged(page, total, list));
  });

  return app;
}
