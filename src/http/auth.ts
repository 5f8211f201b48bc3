import type { Context, MiddlewareHandler } from "hono";
import type { Services } from "../services.ts";
import { json, preBusinessError } from "./envelope.ts";
import { secured } from "./openapi.ts";

export interface AuthUser {
  readonly userId: bigint;
  readonly deviceId: string;
}

/** Fetch bindings from src/node.ts: `ip` the peer address, `wsUrl` the node's own ws(s)://…/ws (init's fallback). */
export type AppEnv = { Variables: { user: AuthUser }; Bindings: { ip?: string; wsUrl?: string } };

/** The bearer token of a request, from `Authorization: Bearer …`. */
export function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

export function unauthorized(c: Context, content: string): Response {
  return json(c, preBusinessError(401, "unauthorized", content), 401);
}

/** Access-token check for every authenticated route (spec §5.1, §5.3). */
export function requireUser(services: Services): MiddlewareHandler<AppEnv> {
  return secured("bearer", async (c, next) => {
    const token = bearer(c.req.header("authorization"));
    if (!token) return unauthorized(c, "missing bearer token");
    const claims = await services.tokens.verify(token, "access");
    if (!claims.ok) return unauthorized(c, claims.error.msg);
    // A deleted account's tokens die with it (account logout, docs/auth.md). The same batched check with a short
    // memory of live accounts as the WebSocket handshake (docs/websocket.md): deletions drop it on every node.
    if (!(await services.accounts.liveness.isActive(claims.value.userId))) return unauthorized(c, "account no longer exists");
    c.set("user", { userId: claims.value.userId, deviceId: claims.value.deviceId });
    await next();
  });
}

export const currentUser = (c: Context<AppEnv>): AuthUser => c.get("user");
