import { Hono } from "hono";
import { z } from "zod";
import { unwrap } from "../../domain/errors.ts";
import type { Social } from "../../domain/social/index.ts";
import { idList, MAX_ID_LIST, requireId } from "../../domain/social/input.ts";
import { groupAttr } from "../../domain/social/rules.ts";
import type { Services } from "../../services.ts";
import { currentUser, requireUser, type AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { parsePage, paged } from "../paging.ts";
import { input, params } from "../params.ts";
import { FailureError } from "../../domain/errors.ts";
import { perUserThrottle } from "../throttle.ts";

const text = (max: number) => z.string().trim().max(max).optional();
const groupEdit = z.object({ title: text(100), avatar: text(1024), introduction: text(2000) });
const roleChange = z.object({ role: z.enum(["manager", "member"]) });

function memberUids(p: Record<string, unknown>): bigint[] {
  const ids = idList(p.member_uids ?? p.member_user_ids);
  if (!ids) throw new FailureError({ kind: "bad_request", msg: `member_uids: must be a list of at most ${MAX_ID_LIST} 64-bit ids` });
  return ids;
}

const gidOf = (p: Record<string, unknown>) => unwrap(requireId(p, "gid", "group_id"));

/** Groups and members (docs/social.md). */
export function groupRoutes(services: Services, social: Social): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("/api/v1/group/*", requireUser(services));
  app.use("/api/v1/group_member/*", requireUser(services));
  // Every management call stores and fans out notices to the members: one per-user budget for all of them.
  const manage = perUserThrottle(services, services.config.groupOpsPerMin, "group changes");

  app.post("/api/v1/group/add", manage, async (c) => {
    const p = await params(c);
    const { title } = input(groupEdit, p);
    return ok(c, unwrap(await social.groups.create(currentUser(c).userId, memberUids(p), title ?? "")));
  });

  app.post("/api/v1/group/edit", manage, async (c) => {
    const p = await params(c);
    return ok(c, unwrap(await social.groups.edit(currentUser(c).userId, gidOf(p), input(groupEdit, p))));
  });

  app.post("/api/v1/group/dissolve", manage, async (c) =>
    ok(c, unwrap(await social.groups.dissolve(currentUser(c).userId, gidOf(await params(c))))),
  );

  app.get("/api/v1/group/detail", async (c) =>
    ok(c, unwrap(await social.groups.detail(currentUser(c).userId, gidOf(await params(c))))),
  );

  app.get("/api/v1/group/page", async (c) => {
    const p = await params(c);
    const page = parsePage(p);
    const { total, list } = await social.groups.page(currentUser(c).userId, groupAttr(p.attr), page.offset, page.size);
    return ok(c, paged(page, total, list));
  });

  app.post("/api/v1/group_member/join", manage, async (c) => {
    const p = await params(c);
    return ok(c, unwrap(await social.groups.join(currentUser(c).userId, gidOf(p), memberUids(p))));
  });

  app.post("/api/v1/group_member/leave", manage, async (c) =>
    ok(c, unwrap(await social.groups.leave(currentUser(c).userId, gidOf(await params(c))))),
  );

  app.post("/api/v1/group_member/role", manage, async (c) => {
    const p = await params(c);
    const target = unwrap(requireId(p, "user_id", "uid"));
    const { role } = input(roleChange, p);
    return ok(c, unwrap(await social.groups.setRole(currentUser(c).userId, gidOf(p), target, role)));
  });

  app.get("/api/v1/group_member/page", async (c) => {
    const p = await params(c);
    const page = parsePage(p);
    const { total, list } = unwrap(await social.groups.memberPage(currentUser(c).userId, gidOf(p), page.offset, page.size));
    return ok(c, paged(page, total, list));
  });

  return app;
}
