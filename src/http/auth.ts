import type { Context, MiddlewareHandler } from "hono";
import type { Services } from "../services.ts";
import { VERDICT_REFUSAL } from "../domain/auth/liveness.ts";
import { json, preBusinessError } from "./envelope.ts";
import { secured } from "./openapi.ts";

export interface AuthUser {
  readonly userId: bigint;
  /** The token's device (`did`), "" for a device-less token. */
  readonly deviceId: string;
  /** The token's session generation (docs/auth.md "Revocation"). */
  readonly gen: number;
}

/** Fetch bindings from src/node.ts: `ip` the peer address, `wsUrl` the node's own ws(s)://…/ws (init's fallback). */
export type AppEnv = { Variables: { user: AuthUser }; Bindings: { ip?: string; wsUrl?: string } };

/** The bearer token of a request, from `Authorization: Bearer …`. */
export function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

export function unauthorized(c: Context, content: string, title = "unauthorized"): Response {
  return json(c, preBusinessError(401, title, content), 401);
}

/** Access-token check for every authenticated route (spec §5.1, §5.3). */
export function requireUser(services: Services): MiddlewareHandler<AppEnv> {
  return secured("bearer", async (c, next) => {
    const token = bearer(c.req.header("authorization"));
    if (!token) return unauthorized(c, "missing bearer token");
    const claims = await services.tokens.verify(token, "access");
    if (!claims.ok) return unauthorized(c, claims.error.msg);
    // Deleted, suspended, signed out: refused (docs/auth.md "Revocation"). The same batched check with a short
    // memory of live sessions as the WebSocket handshake (docs/websocket.md); revocations drop it on every node.
    const { userId, deviceId, gen } = claims.value;
    const verdict = await services.accounts.liveness.check(userId, deviceId, gen);
    if (verdict !== "ok") return unauthorized(c, VERDICT_REFUSAL[verdict][1], VERDICT_REFUSAL[verdict][0]);
    c.set("user", { userId, deviceId, gen });
    await next();
  });
}

export const currentUser = (c: Context<AppEnv>): AuthUser => c.get("user");
