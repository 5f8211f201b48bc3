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
