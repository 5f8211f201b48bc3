import { Hono } from "hono";
import { z } from "zod";
import { Admins } from "../../domain/admin/admins.ts";
import { PERMISSIONS, can } from "../../domain/admin/roles.ts";
import { unwrap } from "../../domain/errors.ts";
import { featuresFromConfig } from "../../domain/features/matrix.ts";
import type { Services } from "../../services.ts";
import { endAdminSession, requireAdmin, requirePermission, startAdminSession, type AdminEnv } from "../admin-auth.ts";
import { ok } from "../envelope.ts";
import { body, input } from "../params.ts";
import { perIpThrottle } from "../throttle.ts";

const Login = z.object({ account: z.string({ error: "account is required" }), pwd: z.string({ error: "pwd is required" }) });

/** Admin API (spec §5.4) under /api/adm: cookie sessions, role permissions. */
export function adminRoutes(services: Services): Hono<AdminEnv> {
  const app = new Hono<AdminEnv>();
  const admins = new Admins(services.store.db, services.ids, services.now, services.config.passwordMemoryKib);
  const features = featuresFromConfig(services.config.features);

  app.post("/api/adm/passport/login", perIpThrottle(services, services.config.loginPerIp), async (c) => {
    const req = input(Login, await body(c));
    const admin = unwrap(await admins.login(req.account, req.pwd));
    const expiresAt = await startAdminSession(c, services, admin.id);
    const permissions = PERMISSIONS.filter((p) => can(admin.role, p));
    return ok(c, { id: admin.id, account: admin.account, role: admin.role, permissions, expires_at: expiresAt });
  });
  app.post("/api/adm/passport/logout", (c) => {
    endAdminSession(c);
    return ok(c);
  });

  app.use("/api/adm/admin/*", requireAdmin(services, admins));
  app.get("/api/adm/admin/config/features", requirePermission("settings:view"), (c) => ok(c, features));
  return app;
}
