import { Hono } from "hono";
import { z } from "zod";
import type { Devices } from "../../domain/accounts/devices.ts";
import { Profiles, SEARCHABLE_BY } from "../../domain/accounts/profiles.ts";
import { unwrap } from "../../domain/errors.ts";
import type { Social } from "../../domain/social/index.ts";
import { requireId } from "../../domain/social/input.ts";
import type { Services } from "../../services.ts";
import { currentUser, requireUser, type AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { parsePage, paged } from "../paging.ts";
import { schema, valid } from "../openapi.ts";
import { perUserThrottle } from "../throttle.ts";
import { userIdKeys } from "../user-id.ts";
import { zIdAlias } from "../zod.ts";

const Patch = z.object({
  nickname: z.string().optional(),
  avatar: z.string().optional(),
  signature: z.string().optional(),
  searchable_by: z.enum(SEARCHABLE_BY).optional(),
});
const SearchQuery = z.object({ keyword: z.string().max(64).optional(), page: z.string().optional(), size: z.string().optional() });
const DeviceRef = z.object({ device_id: z.string({ error: "device_id is required" }).min(1).max(128) });
const Rename = DeviceRef.extend({ name: z.string({ error: "name is required" }) });
const UserRef = z.object({ user_id: zIdAlias("required (or uid)"), uid: zIdAlias() });

/** Search answers are short pages: finding people is not a way to list them. */
export const SEARCH_PAGE_MAX = 50;

/** Profile, finding people and my devices (docs/accounts.md). */
export function accountRoutes(services: Services, social: Social, devices: Devices): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { store, now, log, config } = services;
  const profiles = new Profiles({ db: store.db, now, notifier: devices.notifier, facts: social.facts, log });
  const auth = requireUser(services);
  const writes = perUserThrottle(services, config.accountWritesPerMin, "profile and device changes");
  const searches = perUserThrottle(services, config.searchPerMin, "searches");

  app.get("/api/v1/user/profile", auth, schema({ summary: "My profile" }), async (c) => ok(c, unwrap(await profiles.mine(currentUser(c).userId))));

  app.post("/api/v1/user/profile/update", auth, writes, schema({ summary: "Update nickname, avatar, signature or searchable_by; friends get user_profile_changed", params: Patch }), async (c) => {
    const { userId, deviceId } = currentUser(c);
    return ok(c, unwrap(await profiles.update(userId, deviceId, valid(c, Patch))));
  });

  app.get("/api/v1/user/info", auth, schema({ summary: "Another user's card: stranger or friend view (user_id or uid)", params: UserRef }), async (c) => {
    const target = unwrap(requireId(valid(c, UserRef), "user_id", "uid"));
    return ok(c, unwrap(await profiles.view(currentUser(c).userId, target)));
  });

  app.get("/api/v1/user/search", auth, searches, schema({ summary: "Find people: exact account or nickname prefix, within each user's searchable_by", query: SearchQuery }), async (c) => {
    const p = valid(c, SearchQuery);
    const page = parsePage({ page: p.page, size: Math.min(Number(p.size) || 20, SEARCH_PAGE_MAX) });
    const keyword = typeof p.keyword === "string" ? p.keyword : "";
    const { total, list } = unwrap(await profiles.search(currentUser(c).userId, keyword, page.offset, page.size));
    return ok(c, paged(page, total, list));
  });

  app.get("/api/v1/user/device/list", auth, schema({ summary: "My devices: type, name, trust, signed in, online, last seen" }), async (c) => {
    const { userId, deviceId } = currentUser(c);
    return ok(c, { ...userIdKeys(userId), list: await devices.list(userId, deviceId, await services.sessions.onlineDevices(userId)) });
  });

  app.post("/api/v1/user/device/rename", auth, writes, schema({ summary: "Rename one of my devices", params: Rename }), async (c) => {
    const req = valid(c, Rename);
    return ok(c, unwrap(await devices.rename(currentUser(c).userId, req.device_id, req.name)));
  });

  // Remote sign-out: the device's tokens stop at once, its sockets on every node are told and closed (4104).
  app.post("/api/v1/user/device/signout", auth, writes, schema({ summary: "Sign out one of my devices: tokens revoked, sockets closed 4104 on every node", params: DeviceRef }), async (c) => {
    const { userId, deviceId: by } = currentUser(c);
    const target = valid(c, DeviceRef).device_id;
    const { at } = unwrap(await devices.signOut(userId, by, target));
    return ok(c, { ...userIdKeys(userId), device_id: target, signed_out_at: at });
  });

  return app;
}
