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
import { parsePage, paged } from "../paging.ts";
import { input, params } from "../params.ts";
import { perUserThrottle } from "../throttle.ts";
import { zBool } from "../zod.ts";

const listQuery = z.object({ is_read: zBool.optional() });
const allFlag = z.object({ all: zBool.optional() });
const keywordQuery = z.object({ keyword: z.string().trim().max(64).optional() });

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

  app.post("/api/v1/mention/list", async (c) => {
    const p = await params(c);
    const page = parsePage(p);
    const { is_read } = input(listQuery, p);
    const { total, list } = unwrap(
      await social.mentions.list(currentUser(c).userId, { offset: page.offset, limit: page.size, isRead: is_read, gid: gidOf(p) }),
    );
    return ok(c, { ...paged(page, total, list), items: list });
  });

  app.post("/api/v1/mention/unread", async (c) => {
    const count = unwrap(await social.mentions.unread(currentUser(c).userId, gidOf(await params(c))));
    return ok(c, { count });
  });

  app.post("/api/v1/mention/mark_read", writes, async (c) => {
    const count = unwrap(await social.mentions.markRead(currentUser(c).userId, selector(await params(c))));
    return ok(c, { count });
  });

  app.post("/api/v1/mention/suggest", async (c) => {
    const p = await params(c);
    const gid = unwrap(requireId(p, "gid", "group_id"));
    const { keyword } = input(keywordQuery, p);
    const members = unwrap(await social.mentions.suggest(currentUser(c).userId, gid, keyword ?? "", parsePage(p).size));
    return ok(c, { members, items: members });
  });

  return app;
}
