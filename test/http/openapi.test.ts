/** /openapi.json and /docs: generated from the live route table, schemas from the routes' own `schema()` declarations. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Hono } from "hono";
import { z } from "zod";
import { openApiDocument, schema, secured, valid } from "../../src/http/openapi.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";

let node: TestNode;
beforeAll(async () => {
  node = await startTestNode("pglite");
});
afterAll(() => node.stop());

type Doc = { openapi: string; paths: Record<string, Record<string, any>> };

test("every route of the app is in the document, and nothing else", async () => {
  const doc = (await api(node, "GET", "/openapi.json")).body as Doc;
  expect(doc.openapi).toBe("3.1.0");
  const routes = new Set(node.http.routes.filter((r) => r.method !== "ALL").map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, "{$1}")}`));
  const documented = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`)));
  expect(routes.size).toBeGreaterThan(40);
  expect([...documented].sort()).toEqual([...routes].sort());
});

test("declared schemas, auth and summaries reach the document", async () => {
  const { paths } = (await api(node, "GET", "/openapi.json")).body as Doc;
  const signup = paths["/api/v1/passport/signup"]!.post;
  expect(signup.requestBody.content["application/json"].schema).toMatchObject({ type: "object", required: ["account", "pwd"] });
  expect(signup.security).toBeUndefined();
  expect(paths["/api/v1/friend/list"]!.get.security).toEqual([{ bearer: [] }]);
  expect(paths["/api/adm/admin/config/features"]!.get.security).toEqual([{ adminCookie: [] }]);
  expect(paths["/api/v1/user/apply_logout"]!.post.security).toEqual([{ bearer: [] }]);
  expect(paths["/health"]!.get.security).toBeUndefined();
  const agents = paths["/api/v1/agent/list"]!.get;
  expect(agents.summary).toContain("assistants");
  expect(agents.parameters.map((p: { name: string }) => p.name)).toContain("keyword");
  // Query-or-body routes: the body of a POST; aliases and the §4.3 path-parameter fallback are listed.
  const add = paths["/api/v1/friend/add"]!.post.requestBody.content["application/json"].schema;
  expect(Object.keys(add.properties)).toEqual(["to", "user_id", "uid", "payload"]);
  const create = paths["/api/v1/channel/create"]!.post.requestBody.content["application/json"].schema;
  expect(create.required).toEqual(expect.arrayContaining(["name", "visibility", "access_type", "join_policy"]));
  const messages = paths["/api/v1/channel/{channel_id}/messages"]!.get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
  expect(messages).toEqual(["path:channel_id", "query:channel_id", "query:cursor", "query:limit"]);
});

/**
 * Routes that take no request body and no query (the handler reads only the token, the path or nothing).
 * Every other route must declare the schema it validates with, so a new route without one fails here.
 */
const NO_INPUT: Record<string, string> = {
  "get /health": "liveness probe",
  "get /readyz": "readiness probe",
  "get /metrics": "Prometheus scrape",
  "get /openapi.json": "this document",
  "get /docs": "the reference page",
  "get /privacy-policy": "static page",
  "get /account-deletion": "static page",
  "get /api/v1/app/features": "public feature matrix",
  "get /api/v1/app/init": "public init data",
  "get /api/v1/init": "public init data (encrypted)",
  "post /api/v1/passport/logout": "the token names the device",
  "post /api/v1/user/cancel_logout": "the token names the account",
  "get /api/v1/user/profile": "the token names the account",
  "get /api/v1/user/device/list": "the token names the account",
  "get /api/v1/friend/list": "the token names the account",
  "get /api/v1/e2ee/social/proxy_shards": "the token names the account",
  "post /api/adm/passport/logout": "the cookie names the session",
  "get /api/adm/admin/config/features": "feature matrix",
  "get /api/v1/channels/managed": "the token names the account",
  "get /api/v1/channels/unread/summary": "the token names the account",
  "get /api/v1/channel/invitations/my": "the token names the account",
  "get /api/v1/channel/invitations/sent": "the token names the account",
  "get /api/v1/channel/orders/my": "the token names the account",
};
/** Routes that take input but do not declare it yet, each with the reason. */
const UNDECLARED: Record<string, string> = {};

test("every route that takes input declares the schema it validates with", async () => {
  const { paths } = (await api(node, "GET", "/openapi.json")).body as Doc;
  const missing: string[] = [];
  const stale: string[] = [];
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const key = `${method} ${path}`;
      const declared = op.requestBody !== undefined || op.parameters.some((p: { in: string }) => p.in === "query");
      const excused = key in NO_INPUT || key in UNDECLARED;
      if (!declared && !excused) missing.push(key);
      if (declared && (key in NO_INPUT || key in UNDECLARED)) stale.push(key);
      if (op.summary === `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}` && !excused) missing.push(`${key} (no summary)`);
    }
  }
  expect(missing).toEqual([]);
  expect(stale).toEqual([]);
  const listed = [...Object.keys(NO_INPUT), ...Object.keys(UNDECLARED)];
  expect(listed.filter((key) => !paths[key.split(" ")[1]!]?.[key.split(" ")[0]!])).toEqual([]);
});

test("with IBIS_API_SIGNATURE on, /api/v1 operations also require the signature", async () => {
  const signed = await startTestNode("pglite", { apiSignature: true, apiKeys: `ios:${"k".repeat(32)}` });
  try {
    const { paths } = (await api(signed, "GET", "/openapi.json")).body as Doc;
    expect(paths["/api/v1/friend/list"]!.get.security).toEqual([{ bearer: [], signature: [] }]);
    expect(paths["/api/v1/passport/signup"]!.post.security).toEqual([{ signature: [] }]);
    expect(paths["/health"]!.get.security).toBeUndefined();
  } finally {
    await signed.stop();
  }
});

test("/docs is an HTML reference listing the routes", async () => {
  const res = await fetch(node.url + "/docs");
  expect(res.headers.get("content-type")).toContain("text/html");
  const html = await res.text();
  expect(html).toContain("<code>/api/v1/passport/signup</code>");
  expect(html).toContain('href="/openapi.json"');
});

test("a route added anywhere appears without registering it twice; schema() validates and hands the value over", async () => {
  const Body = z.object({ name: z.string().min(1) });
  const app = new Hono();
  app.use("/private/*", secured("bearer", async (_c, next) => next()));
  app.post("/private/things/:id", schema({ summary: "Make a thing", body: Body }), (c) => c.json(valid(c, Body)));
  app.get("/open", (c) => c.text("ok"));
  const doc = openApiDocument(app, { title: "t", version: "0" }) as Doc;
  expect(Object.keys(doc.paths).sort()).toEqual(["/open", "/private/things/{id}"]);
  const op = doc.paths["/private/things/{id}"]!.post;
  expect(op).toMatchObject({ summary: "Make a thing", security: [{ bearer: [] }], parameters: [{ name: "id", in: "path" }] });

  const Either = z.object({ n: z.coerce.number().int() });
  app.get("/either", schema({ params: Either }), (c) => c.json(valid(c, Either)));
  app.post("/either", schema({ params: Either }), (c) => c.json(valid(c, Either)));
  const both = openApiDocument(app, { title: "t", version: "0" }) as Doc;
  expect(both.paths["/either"]!.get.parameters).toMatchObject([{ name: "n", in: "query", required: true }]);
  expect(both.paths["/either"]!.post.requestBody.content["application/json"].schema.required).toEqual(["n"]);
  expect(await (await app.request("/either?n=2")).json()).toEqual({ n: 2 });
  expect(await (await app.request("/either?n=2", { method: "POST", body: '{"n":3}', headers: { "content-type": "application/json" } })).json()).toEqual({ n: 3 });

  const good = await app.request("/private/things/1", { method: "POST", body: '{"name":"x"}', headers: { "content-type": "application/json" } });
  expect(await good.json()).toEqual({ name: "x" });
  const res = await node.http.request("/api/v1/passport/signup", { method: "POST", body: '{"account":"abc"}', headers: { "content-type": "application/json" } }, { ip: "1.2.3.4" });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { msg: string }).msg).toContain("pwd");
});
