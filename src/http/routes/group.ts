import { Hono } from "hono";
import { z } from "zod";
import { unwrap } from "../../domain/errors.ts";
import type { Social } from "../../domain/social/index.ts";
import { idList, MAX_ID_LIST, requireId } from "../../domain/social/input.ts";
import { groupAttr } from "../../domain/social/rules.ts";
import type { Services } from "../../services.ts";
import { currentUser, requireUser, type AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { pageFields, parsePage, paged } from "../paging.ts";
import { schema, valid } from "../openapi.ts";
import { FailureError } from "../../domain/errors.ts";
import { perUserThrottle } from "../throttle.ts";
import { zAsSent, zIdAlias } from "../zod.ts";

const text = (max: number) => z.string().trim().max(max).optional();
const groupEdit = { title: text(100), avatar: text(1024), introduction: text(2000) };
// Ids are read with requireId / idList (first alias present wins), from query or body.
const gid = { gid: zIdAlias("required (or group_id)"), group_id: zIdAlias() };
const members = {
  member_uids: zAsSent(`64-bit ids: a list or a comma-separated string, at most ${MAX_ID_LIST} (or member_user_ids)`),
  member_user_ids: zAsSent("alias of member_uids"),
};
const Create = z.object({ ...groupEdit, ...members });
const Edit = z.object({ ...gid, ...groupEdit });
const Group = z.object(gid);
const GroupPage = z.object({ attr: zAsSent("owner (default), join or manager"), ...pageFields });
const Join = z.object({ ...gid, ...members });
const Role = z.object({ ...gid, user_id: zIdAlias("required (or uid)"), uid: zIdAlias(), role: z.enum(["manager", "member"]) });
const MemberPage = z.object({ ...gid, ...pageFields });

function memberUids(p: { member_uids?: unknown; member_user_ids?: unknown }): bigint[] {
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

  app.post("/api/v1/group/add", manage, schema({ summary: "Create a group with me as owner", params: Create }), async (c) => {
    const p = valid(c, Create);
    return ok(c, unwrap(await social.groups.create(currentUser(c).userId, memberUids(p), p.title ?? "")));
  });

  app.post("/api/v1/group/edit", manage, schema({ summary: "Edit title, avatar or introduction", params: Edit }), async (c) => {
    const { gid, group_id, ...edit } = valid(c, Edit);
    return ok(c, unwrap(await social.groups.edit(currentUser(c).userId, gidOf({ gid, group_id }), edit)));
  });

  app.post("/api/v1/group/dissolve", manage, schema({ summary: "Dissolve a group (owner)", params: Group }), async (c) =>
    ok(c, unwrap(await social.groups.dissolve(currentUser(c).userId, gidOf(valid(c, Group))))),
  );

  app.get("/api/v1/group/detail", schema({ summary: "One group's details", params: Group }), async (c) =>
    ok(c, unwrap(await social.groups.detail(currentUser(c).userId, gidOf(valid(c, Group))))),
  );

  app.get("/api/v1/group/page", schema({ summary: "My groups by role, paged", params: GroupPage }), async (c) => {
    const p = valid(c, GroupPage);
    const page = parsePage(p);
    const { total, list } = await social.groups.page(currentUser(c).userId, groupAttr(p.attr), page.offset, page.size);
    return ok(c, paged(page, total, list));
  });

  app.post("/api/v1/group_member/join", manage, schema({ summary: "Add members to a group", params: Join }), async (c) => {
    const p = valid(c, Join);
    return ok(c, unwrap(await social.groups.join(currentUser(c).userId, gidOf(p), memberUids(p))));
  });

  app.post("/api/v1/group_member/leave", manage, schema({ summary: "Leave a group", params: Group }), async (c) =>
    ok(c, unwrap(await social.groups.leave(currentUser(c).userId, gidOf(valid(c, Group))))),
  );

  app.post("/api/v1/group_member/role", manage, schema({ summary: "Make a member manager or member (owner)", params: Role }), async (c) => {
    const p = valid(c, Role);
    const target = unwrap(requireId(p, "user_id", "uid"));
    return ok(c, unwrap(await social.groups.setRole(currentUser(c).userId, gidOf(p), target, p.role)));
  });

  app.get("/api/v1/group_member/page", schema({ summary: "A group's members, paged", params: MemberPage }), async (c) => {
    const p = valid(c, MemberPage);
    const page = parsePage(p);
    const { total, list } = unwrap(await social.groups.memberPage(currentUser(c).userId, gidOf(p), page.offset, page.size));
    return ok(c, paged(page, total, list));
  });

  return app;
}
