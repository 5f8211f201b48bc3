import { Hono, type Context } from "hono";
import { z } from "zod";
import { AdminAudit } from "../../domain/admin/audit.ts";
import { Admins } from "../../domain/admin/admins.ts";
import { PERMISSIONS, can } from "../../domain/admin/roles.ts";
import { AdminSessions } from "../../domain/admin/sessions.ts";
import { AdminUsers, USER_STATES } from "../../domain/admin/users.ts";
import { unwrap } from "../../domain/errors.ts";
import { featuresFromConfig } from "../../domain/features/matrix.ts";
import { optionalId, requireId } from "../../domain/social/input.ts";
import type { Services } from "../../services.ts";
import { DEVICE_TYPES } from "../../ws/handshake.ts";
import { endAdminSession, requireAdmin, requirePermission, startAdminSession, type AdminEnv } from "../admin-auth.ts";
import { ok } from "../envelope.ts";
import { pageFields, parsePage, paged } from "../paging.ts";
import { schema, valid } from "../openapi.ts";
import { perIpThrottle, perKeyThrottle } from "../throttle.ts";
import { userIdKeys } from "../user-id.ts";
import { zIdAlias } from "../zod.ts";

const Login = z.object({ account: z.string({ error: "account is required" }), pwd: z.string({ error: "pwd is required" }) });
const UserQuery = z.object({ keyword: z.string().max(64).optional(), state: z.enum(USER_STATES).optional() });
const UserPage = UserQuery.extend(pageFields);
// The user is read with requireId / optionalId (user_id first, uid its alias).
const Target = z.object({ user_id: zIdAlias("required (or uid)"), uid: zIdAlias(), reason: z.string().max(500).optional() });
const AuditPage = z.object({ user_id: zIdAlias("only rows about this user (or uid)"), uid: zIdAlias(), ...pageFields });
const Upgrade = z.object({
  device_type: z.enum([...DEVICE_TYPES] as [string, ...string[]], { error: `device_type must be one of ${[...DEVICE_TYPES].join(", ")}` }),
  min_version: z.string({ error: "min_version is required" }).trim().min(1).max(32),
  message: z.string().max(500).optional(),
  url: z.string().max(512).regex(/^https?:\/\/\S+$/i, "url must be an http(s) URL").optional(),
});

/** Admin API (spec §5.4) under /api/adm: server-side cookie sessions, role permissions, an audit row per action. */
export function adminRoutes(services: Services): Hono<AdminEnv> {
  const app = new Hono<AdminEnv>();
  const { store, ids, now, config } = services;
  const admins = new Admins(store.db, ids, now, config.passwordMemoryKib);
  const sessions = new AdminSessions(store.db, now);
  const audit = new AdminAudit(store.db, ids, now);
  const users = new AdminUsers(store.db, services.accounts.sessions, services.sessions, now);
  const features = featuresFromConfig(config.features);
  const writes = perKeyThrottle(services, config.accountWritesPerMin, "admin changes", (c: Context<AdminEnv>) => `admin:${c.get("admin").id}`);
  const adminId = (c: Context<AdminEnv>) => c.get("admin").id;

  app.post("/api/adm/passport/login", perIpThrottle(services, config.loginPerIp), schema({ summary: "Admin login: sets the ibis_admin session cookie", body: Login }), async (c) => {
    const req = valid(c, Login);
    const admin = unwrap(await admins.login(req.account, req.pwd));
    const expiresAt = await startAdminSession(c, services, sessions, admin.id);
    const permissions = PERMISSIONS.filter((p) => can(admin.role, p));
    return ok(c, { id: admin.id, account: admin.account, role: admin.role, permissions, expires_at: expiresAt });
  });
  app.post("/api/adm/passport/logout", schema({ summary: "Admin logout: ends the cookie session" }), async (c) => {
    await endAdminSession(c, services, sessions);
    return ok(c);
  });

  app.use("/api/adm/admin/*", requireAdmin(services, sessions));
  app.get("/api/adm/admin/config/features", requirePermission("settings:view"), schema({ summary: "Feature matrix (settings:view)" }), (c) => ok(c, features));

  app.get("/api/adm/admin/user/page", requirePermission("users:view"), schema({ summary: "Users: search by id, account or nickname prefix, by state (users:view)", params: UserPage }), async (c) => {
    const q = valid(c, UserPage);
    const page = parsePage(q);
    const { total, list } = await users.page(q.keyword ?? "", q.state ?? "all", page.offset, page.size);
    return ok(c, paged(page, total, list));
  });

  /** The user named by `user_id`/`uid` and the admin's optional reason. */
  const target = (c: Context<AdminEnv>) => {
    const p = valid(c, Target);
    return { userId: unwrap(requireId(p, "user_id", "uid")), reason: p.reason ?? "" };
  };

  app.post("/api/adm/admin/user/suspend", requirePermission("users:edit"), writes, schema({ summary: "Suspend a user: sessions revoked, sockets cut everywhere (users:edit)", params: Target }), async (c) => {
    const { userId, reason } = target(c);
    const r = unwrap(await users.suspend(userId));
    if (r.changed) await audit.record(adminId(c), "user.suspend", userId, { reason });
    return ok(c, { ...userIdKeys(userId), suspended_at: r.suspended_at });
  });

  app.post("/api/adm/admin/user/unsuspend", requirePermission("users:edit"), writes, schema({ summary: "Unsuspend a user (users:edit)", params: Target }), async (c) => {
    const { userId, reason } = target(c);
    const r = unwrap(await users.unsuspend(userId));
    if (r.changed) await audit.record(adminId(c), "user.unsuspend", userId, { reason });
    return ok(c, { ...userIdKeys(userId), suspended_at: null });
  });

  // An upgrade notice to every device of one platform connected now, on every node (not stored).
  app.post("/api/adm/admin/app_upgrade", requirePermission("broadcast:send"), writes, schema({ summary: "S2C app_upgrade to every connected device of one type (broadcast:send)", params: Upgrade }), async (c) => {
    const req = valid(c, Upgrade);
    const payload = { device_type: req.device_type, min_version: req.min_version, message: req.message ?? "", url: req.url ?? "", sent_at: now() };
    services.sessions.tellDeviceType(req.device_type, "app_upgrade", payload);
    await audit.record(adminId(c), "app_upgrade", undefined, payload);
    return ok(c, payload);
  });

  app.get("/api/adm/admin/audit/page", requirePermission("admins:manage"), schema({ summary: "Admin audit rows, newest first (admins:manage)", params: AuditPage }), async (c) => {
    const p = valid(c, AuditPage);
    const page = parsePage(p);
    const target = unwrap(optionalId(p, "user_id", "uid"));
    const { total, list } = await audit.page(page.offset, page.size, target);
    return ok(c, paged(page, total, list));
  });
  return app;
}
