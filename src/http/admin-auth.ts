import { getSignedCookie, setSignedCookie, deleteCookie } from "hono/cookie";
import type { Context, MiddlewareHandler } from "hono";
import type { Admin } from "../domain/admin/admins.ts";
import type { AdminSessions } from "../domain/admin/sessions.ts";
import { can, type Permission } from "../domain/admin/roles.ts";
import type { Services } from "../services.ts";
import { envelope, json } from "./envelope.ts";
import { unauthorized } from "./auth.ts";
import { secured } from "./openapi.ts";

export const ADMIN_COOKIE = "ibis_admin";
export type AdminEnv = { Variables: { admin: Admin }; Bindings: { ip?: string } };

/**
 * Admin sessions (spec §5.4): an HttpOnly cookie holding a random session id,
 * HMAC-signed with the token secret (hono signed cookies); the session lives
 * in admin_session (AdminSessions), so logout really ends it. The role is read
 * from the database on every request, so a role change applies at once.
 */
export async function startAdminSession(c: Context, services: Services, sessions: AdminSessions, adminId: bigint): Promise<number> {
  const expiresAt = services.now() + services.config.adminSessionTtl * 1000;
  const id = await sessions.start(adminId, expiresAt);
  await setSignedCookie(c, ADMIN_COOKIE, id, services.secrets.tokenSecret, {
    httpOnly: true,
    sameSite: "Strict",
    path: "/api/adm",
    secure: services.config.env === "production",
    maxAge: services.config.adminSessionTtl,
  });
  return expiresAt;
}

/** The session id of a correctly signed cookie, else undefined. */
async function cookieSession(c: Context, services: Services): Promise<string | undefined> {
  const value = await getSignedCookie(c, services.secrets.tokenSecret, ADMIN_COOKIE);
  return typeof value === "string" && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
}

/** Ends the session server-side (the cookie stops working wherever it was copied) and clears the cookie. */
export async function endAdminSession(c: Context, services: Services, sessions: AdminSessions): Promise<void> {
  const id = await cookieSession(c, services);
  if (id) await sessions.end(id);
  deleteCookie(c, ADMIN_COOKIE, { path: "/api/adm" });
}

/** Unauthenticated admin API calls: 401 JSON in the pre-business shape. */
export function requireAdmin(services: Services, sessions: AdminSessions): MiddlewareHandler<AdminEnv> {
  return secured("adminCookie", async (c, next) => {
    const id = await cookieSession(c, services);
    const admin = id === undefined ? undefined : await sessions.find(id);
    if (!admin) return unauthorized(c, "admin login required");
    c.set("admin", admin);
    await next();
  });
}

/** Without the permission: code 403 with an empty payload (spec §5.4). */
export function requirePermission(permission: Permission): MiddlewareHandler<AdminEnv> {
  return async (c, next) => {
    if (!can(c.get("admin").role, permission)) return json(c, envelope(403, `permission ${permission} required`, {}), 403);
    await next();
  };
}
