import { Hono } from "hono";
import { z } from "zod";
import { FailureError, unwrap } from "../../domain/errors.ts";
import type { Social } from "../../domain/social/index.ts";
import { optionalId, pick, requireId } from "../../domain/social/input.ts";
import type { MentionSelector } from "../../domain/social/mentions.ts";
import { toId } from "../../ids/tsid.ts";
import type { Services } from "../../services.ts";
import { currentUser, requireUser, type AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { pageFields, parsePage, paged } from "../paging.ts";
import { input } from "../params.ts";
import { schema, valid } from "../openapi.ts";
import { perUserThrottle } from "../throttle.ts";
import { zAsSent, zBool, zIdAlias } from "../zod.ts";

// Parameters come from the query or the body (§4.2); ids are read with requireId/optionalId (first alias present wins).
const allFlag = z.object({ all: zBool.optional() });
const group = { gid: zIdAlias("or group_id"), group_id: zIdAlias() };
const List = z.object({ is_read: zBool.optional(), ...group, ...pageFields });
const Unread = z.object(group);
const MarkRead = z.object({
  msg_id: zAsSent("server id, or the §2.8 message id string"),
  mention_id: zIdAlias("legacy"),
  all: zAsSent("true: every mention (of gid when given); read only when msg_id and mention_id are absent"),
  ...group,
});
const Suggest = z.object({ gid: zIdAlias("required (or group_id)"), group_id: zIdAlias(), keyword: z.string().trim().max(64).optional(), ...pageFields });

const gidOf = (p: Record<string, unknown>) => unwrap(optionalId(p, "gid", "group_id"));

/** mark_read target: msg_id (server id, or the §2.8 id string), mention_id (legacy), or all=true. */
function selector(p: Record<string, unknown>): MentionSelector {
  const msgId = pick(p, "msg_id");
  if (msgId !== undefined) {
    const id = toId(msgId);
    if (id !== undefined) return { msgId: id };
    if (typeof msgId === "string" && msgId.trim()) return { clientMsgId: msgId.trim() };
    throw new FailureError({ kind: "bad_request", msg: "msg_id: must be a message id" });
  }
  if (pick(p, "mention_id") !== undefined) return { mentionId: unwrap(requireId(p, "mention_id")) };
  if (input(allFlag, p).all === true) return { all: true, groupId: gidOf(p) };
  throw new FailureError({ kind: "bad_request", msg: "msg_id, mention_id or all=true is required" });
}

/** @-mentions (§4.2): parameters from query or body. */
export function mentionRoutes(services: Services, social: Social): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("/api/v1/mention/*", requireUser(services));
  const writes = perUserThrottle(services, services.config.stateWritesPerMin, "mention changes");

  app.post("/api/v1/mention/list", schema({ summary: "My mentions, paged (query or body)", params: List }), async (c) => {
    const p = valid(c, List);
    const page = parsePage(p);
    const { total, list } = unwrap(
      await social.mentions.list(currentUser(c).userId, { offset: page.offset, limit: page.size, isRead: p.is_read, gid: gidOf(p) }),
    );
    return ok(c, { ...paged(page, total, list), items: list });
  });

  app.post("/api/v1/mention/unread", schema({ summary: "Unread mention count (query or body)", params: Unread }), async (c) => {
    const count = unwrap(await social.mentions.unread(currentUser(c).userId, gidOf(valid(c, Unread))));
    return ok(c, { count });
  });

  app.post("/api/v1/mention/mark_read", writes, schema({ summary: "Mark mentions read: msg_id, mention_id or all=true (query or body)", params: MarkRead }), async (c) => {
    const count = unwrap(await social.mentions.markRead(currentUser(c).userId, selector(valid(c, MarkRead))));
    return ok(c, { count });
  });

  app.post("/api/v1/mention/suggest", schema({ summary: "Members to mention in a group (query or body)", params: Suggest }), async (c) => {
    const p = valid(c, Suggest);
    const gid = unwrap(requireId(p, "gid", "group_id"));
    const members = unwrap(await social.mentions.suggest(currentUser(c).userId, gid, p.keyword ?? "", parsePage(p).size));
    return ok(c, { members, items: members });
  });

  return app;
}
