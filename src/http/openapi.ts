/**
 * The OpenAPI 3.1 document (GET /openapi.json) and its reference page (GET
 * /docs), generated from the routes Hono actually has: every route appears
 * whether or not it declares anything. A route adds its summary and the zod
 * schemas it validates with through `schema()`, a middleware that records them
 * here and validates the request (the handler reads the result with `valid()`).
 * Auth middlewares mark themselves with `secured()`, so the document knows
 * which routes need a token or an admin session without a second list.
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import { z } from "zod";
import { body, input, params, query } from "./params.ts";

export interface RouteDoc {
  readonly summary?: string;
  /** The query string. */
  readonly query?: z.ZodType;
  /** JSON (or form) body. */
  readonly body?: z.ZodType;
  /** Query and body merged, body winning (`params(c)`), for routes that take either; documented as the query of a GET, the body otherwise. */
  readonly params?: z.ZodType;
}

type Security = "bearer" | "adminCookie";

const docs = new WeakMap<Function, RouteDoc>();
const security = new WeakMap<Function, Security>();
const VALID = "ibis.valid";

/**
 * Declares a route's summary and input schemas: recorded for the document and
 * validated before the handler (400 naming the first bad field, docs/http.md).
 *
 *   app.post("/api/v1/x", schema({ summary: "Do x", body: XBody }), async (c) => { const req = valid(c, XBody); … })
 */
export function schema(doc: RouteDoc): MiddlewareHandler {
  const mw: MiddlewareHandler = async (c, next) => {
    if (doc.query) c.set(VALID as never, input(doc.query, query(c)) as never);
    if (doc.body) c.set(VALID as never, input(doc.body, await body(c)) as never);
    if (doc.params) c.set(VALID as never, input(doc.params, await params(c)) as never);
    await next();
  };
  docs.set(mw, doc);
  return mw;
}

/** What `schema()` validated for this request (params, else the body, else the query). */
export function valid<S extends z.ZodType>(c: Context, _schema: S): z.output<S> {
  return c.get(VALID as never) as z.output<S>;
}

/** Marks an auth middleware so routes behind it are documented as needing it. */
export function secured<M extends MiddlewareHandler<any>>(kind: Security, mw: M): M {
  security.set(mw, kind);
  return mw;
}

const SECURITY_SCHEMES = {
  bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "Access token (docs/auth.md)" },
  adminCookie: { type: "apiKey", in: "cookie", name: "ibis_admin", description: "Admin console session (docs/auth.md)" },
  signature: {
    type: "apiKey",
    in: "header",
    name: "X-Ibis-Signature",
    description: "HMAC-SHA256 request signature with X-Ibis-App, X-Ibis-Timestamp and X-Ibis-Nonce (docs/operations.md)",
  },
} as const;

const ENVELOPE = {
  type: "object",
  description: "Spec §2.1 envelope; code 0 is success (docs/http.md lists the codes).",
  properties: {
    code: { type: "integer" },
    msg: { type: "string" },
    sv_ts: { type: "integer", description: "server time, ms" },
    payload: {},
  },
  required: ["code", "msg", "sv_ts", "payload"],
} as const;

const jsonSchema = (s: z.ZodType) => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
};

const operationNeedsAuth = (kind: Security | undefined, signed: string | undefined, path: string) =>
  kind !== undefined || (signed !== undefined && path.startsWith(signed));

/** `/api/v1/friend/*` style middleware paths as a test on a route path. */
const covers = (pattern: string, path: string) =>
  pattern === path || (pattern.endsWith("*") && path.startsWith(pattern.slice(0, -1)));

/**
 * The document for `app` as it is now (call after every route is registered).
 * `signed`: the path prefix IBIS_API_SIGNATURE covers, when it is on.
 */
export function openApiDocument(app: Hono<any>, info: { title: string; version: string }, signed?: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const guards = app.routes.filter((r) => security.has(r.handler));
  const ops = new Map<string, { method: string; path: string; handlers: Function[] }>();
  for (const r of app.routes) {
    if (r.method === "ALL") continue;
    const key = `${r.method} ${r.path}`;
    const op = ops.get(key) ?? { method: r.method, path: r.path, handlers: [] };
    op.handlers.push(r.handler);
    ops.set(key, op);
  }
  for (const { method, path, handlers } of ops.values()) {
    const doc: RouteDoc = handlers.map((h) => docs.get(h)).find((d) => d !== undefined) ?? {};
    const kind =
      handlers.map((h) => security.get(h)).find((k) => k !== undefined) ??
      guards
        .filter((g) => (g.method === "ALL" || g.method === method) && covers(g.path, path))
        .map((g) => security.get(g.handler))
        .find((k) => k !== undefined);
    const parameters: unknown[] = [...path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: "path", required: true, schema: { type: "string" } }));
    const querySchema = doc.query ?? (method === "GET" ? doc.params : undefined);
    const bodySchema = doc.body ?? (method === "GET" ? undefined : doc.params);
    if (querySchema) {
      const q = jsonSchema(querySchema) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, s] of Object.entries(q.properties ?? {})) {
        parameters.push({ name, in: "query", required: q.required?.includes(name) ?? false, schema: s });
      }
    }
    const operation: Record<string, unknown> = {
      operationId: `${method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, ch: string | undefined) => (ch ?? "").toUpperCase())}`,
      summary: doc.summary ?? `${method} ${path}`,
      tags: [path.split("/").filter((p) => p && p !== "api" && p !== "v1" && p !== "adm")[0] ?? "root"],
      parameters,
      responses: {
        "200": {
          description: "Envelope (also carries 9xx business codes with HTTP 200)",
          content: { "application/json": { schema: { $ref: "#/components/schemas/Envelope" } } },
        },
        ...(operationNeedsAuth(kind, signed, path) ? { "401": { description: "Not authenticated (top-level {code, payload: {title, content}, server_ts})" } } : {}),
      },
    };
    if (bodySchema) {
      operation.requestBody = { required: true, content: { "application/json": { schema: jsonSchema(bodySchema) } } };
    }
    const requirement: Record<string, []> = {};
    if (kind) requirement[kind] = [];
    if (signed && path.startsWith(signed)) requirement.signature = [];
    if (Object.keys(requirement).length) operation.security = [requirement];
    (paths[path.replace(/:(\w+)/g, "{$1}")] ??= {})[method.toLowerCase()] = operation;
  }
  return {
    openapi: "3.1.0",
    info: { ...info, description: "Ibis REST API. Envelope, codes and conventions: docs/http.md; auth: docs/auth.md." },
    paths,
    components: { schemas: { Envelope: ENVELOPE }, securitySchemes: SECURITY_SCHEMES },
  };
}

const esc = (s: string) => s.replace(/[&<>"]/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[ch]!);

/** A self-contained reference page (no scripts or CDNs: the server may have no internet). */
export function referencePage(doc: Record<string, unknown>): string {
  const paths = doc.paths as Record<string, Record<string, Record<string, any>>>;
  const rows = Object.entries(paths)
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => {
        const field = (name: string, required: boolean, where: string, s: { type?: unknown; description?: string }) =>
          `<code>${esc(name)}</code>${required ? "*" : ""} <small>${esc([where, s.type, s.description].filter(Boolean).join(", "))}</small>`;
        const params = (op.parameters as { name: string; in: string; required: boolean; schema: object }[]).map((p) => field(p.name, p.required, p.in, p.schema));
        const body = op.requestBody?.content["application/json"].schema as { properties?: Record<string, object>; required?: string[] } | undefined;
        const fields = Object.entries(body?.properties ?? {}).map(([name, s]) => field(name, body!.required?.includes(name) ?? false, "body", s));
        const input = [...params, ...fields].join("<br>");
        const auth = op.security ? Object.keys(op.security[0]).join(" + ") : "public";
        return `<tr><td><b>${method.toUpperCase()}</b></td><td><code>${esc(path)}</code></td><td>${esc(String(op.summary))}</td><td>${auth}</td><td>${input}</td></tr>`;
      }),
    );
  const info = doc.info as { title: string; version: string };
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(info.title)} API reference</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}pre{margin:4px 0;font-size:12px;white-space:pre-wrap;max-width:40em}</style>
</head><body><h1>${esc(info.title)} ${esc(info.version)} — API reference</h1>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1). Every answer is the envelope <code>{code, msg, sv_ts, payload}</code>.</p>
<table><tr><th>Method</th><th>Path</th><th>Summary</th><th>Auth</th><th>Input</th></tr>${rows.join("")}</table></body></html>`;
}
