import { getSignedCookie, setSignedCookie, deleteCookie } from "hono/cookie";
import type { Context, MiddlewareHandler } from "hono";
import type { Admin, Admins } from "../domain/admin/admins.ts";
import { can, type Permission } from "../domain/admin/roles.ts";
import type { Services } from "../services.ts";
import { envelope, json } from "./envelope.ts";
import { unauthorized } from "./auth.ts";
import { secured } from "./openapi.ts";

export const ADMIN_COOKIE = "ibis_admin";
export type AdminEnv = { Variables: { admin: Admin }; Bindings: { ip?: string } };

/**
 * Admin sessions (spec §5.4): an HttpOnly cookie `<admin id>.<expiry ms>`,
 * HMAC-signed with the token secret (hono signed cookies). The role is read
 * from the database on every request, so a role change applies at once.
 */
export async function startAdminSession(c: Context, services: Services, adminId: bigint): Promise<number> {
  const expiresAt = services.now() + services.config.adminSessionTtl * 1000;
  await setSignedCookie(c, ADMIN_COOKIE, `${adminId}.${expiresAt}`, services.secrets.tokenSecret, {
    httpOnly: true,
    sameSite: "Strict",
    path: "/api/adm",
    secure: services.config.env === "production",
    maxAge: services.config.adminSessionTtl,
  });
  return expiresAt;
}

export function endAdminSession(c: Context): void {
  deleteCookie(c, ADMIN_COOKIE, { path: "/api/adm" });
}

/** Unauthenticated admin API calls: 401 JSON in the pre-business shape. */
export function requireAdmin(services: Services, admins: Admins): MiddlewareHandler<AdminEnv> {
  return secured("adminCookie", async (c, next) => {
    const value = await getSignedCookie(c, services.secrets.tokenSecret, ADMIN_COOKIE);
    const m = typeof value === "string" ? /^(\d{1,19})\.(\d{1,16})$/.exec(value) : null;
    if (!m || Number(m[2]) <= services.now()) return unauthorized(c, "admin login required");
    const admin = await admins.find(BigInt(m[1]!));
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
