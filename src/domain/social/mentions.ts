import { and, asc, count, desc, eq, ilike, ne, or, sql, type SQL } from "drizzle-orm";
import { groupMembers, mentions, users } from "../../db/schema/index.ts";
import type { ImMessage } from "../../delivery/ports.ts";
import { fail, ok, type Result } from "../errors.ts";
import { membership, type SocialContext } from "./context.ts";
import { idList } from "./input.ts";
import { mentionTargets } from "./rules.ts";

type MentionRow = typeof mentions.$inferSelect;

export function mentionJson(m: MentionRow) {
  return {
    id: m.id,
    mention_id: m.id,
    msg_id: m.msgId,
    client_msg_id: m.clientMsgId,
    group_id: m.groupId,
    gid: m.groupId,
    from_uid: m.fromId,
    from_user_id: m.fromId,
    mentioned_uid: m.mentionedId,
    mentioned_user_id: m.mentionedId,
    is_read: m.isRead,
    is_read_bool: m.isRead,
    created_at: m.createdAt,
  };
}

/** Which mentions a mark_read names: a message (server id or §2.8 id string), a mention id, or all (per group). */
export type MentionSelector =
  | { readonly msgId: bigint }
  | { readonly clientMsgId: string }
  | { readonly mentionId: bigint }
  | { readonly all: true; readonly groupId?: bigint };

/** LIKE pattern matching `keyword` literally anywhere. */
export const containsPattern = (keyword: string) => `%${keyword.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** @-mentions (§2.4, §4.2). Only mentions in groups the caller is still a member of are shown. */
export class MentionService {
  constructor(private readonly ctx: SocialContext) {}

  /** After a C2G message is stored: one row per mentioned member (payload.at_uids), batched. */
  async record(msg: ImMessage, groupId: bigint, serverId: bigint): Promise<number> {
    const payload = msg.payload;
    if (payload === null || typeof payload !== "object" || msg.from === null) return 0;
    const atUids = idList((payload as Record<string, unknown>).at_uids);
    if (!atUids || atUids.length === 0) return 0;
    const group = await this.ctx.facts.group(groupId);
    if (!group) return 0;
    const targets = mentionTargets(atUids, group.roles, msg.from);
    if (targets.length === 0) return 0;
    const createdAt = msg.server_ts || this.ctx.now();
    await this.ctx.db
      .insert(mentions)
      .values(
        targets.map((mentionedId) => ({
          id: this.ctx.ids.next(),
          msgId: serverId,
          clientMsgId: msg.id,
          groupId,
          fromId: msg.from!,
          mentionedId,
          createdAt,
        })),
      )
      .onConflictDoNothing();
    return targets.length;
  }

  async #memberCheck(me: bigint, gid: bigint | undefined): Promise<Result<unknown>> {
    return gid === undefined ? ok(undefined) : membership(this.ctx, me, gid);
  }

  #visible(me: bigint, extra: (SQL | undefined)[]) {
    return and(
      eq(mentions.mentionedId, me),
      sql`exists (select 1 from im_group_member gm where gm.group_id = ${mentions.groupId} and gm.user_id = ${me})`,
      ...extra,
    );
  }

  async list(me: bigint, q: { offset: number; limit: number; isRead?: boolean; gid?: bigint }) {
    const check = await this.#memberCheck(me, q.gid);
    if (!check.ok) return check;
    const where = this.#visible(me, [
      q.isRead === undefined ? undefined : eq(mentions.isRead, q.isRead),
      q.gid === undefined ? undefined : eq(mentions.groupId, q.gid),
    ]);
    const [{ total } = { total: 0 }] = await this.ctx.db.select({ total: count() }).from(mentions).where(where);
    const rows = await this.ctx.db
      .select()
      .from(mentions)
      .where(where)
      .orderBy(desc(mentions.id))
      .limit(q.limit)
      .offset(q.offset);
    return ok({ total: Number(total), list: rows.map(mentionJson) });
  }

  async unread(me: bigint, gid?: bigint): Promise<Result<number>> {
    const check = await this.#memberCheck(me, gid);
    if (!check.ok) return check;
    const [{ total } = { total: 0 }] = await this.ctx.db
      .select({ total: count() })
      .from(mentions)
      .where(this.#visible(me, [eq(mentions.isRead, false), gid === undefined ? undefined : eq(mentions.groupId, gid)]));
    return ok(Number(total));
  }

  /** Marks read; a named message or mention that is not the caller's is not_found. Answers how many matched. */
  async markRead(me: bigint, sel: MentionSelector): Promise<Result<number>> {
    let key: SQL | undefined;
    if ("all" in sel) {
      const check = await this.#memberCheck(me, sel.groupId);
      if (!check.ok) return check;
      key = and(eq(mentions.isRead, false), sel.groupId === undefined ? undefined : eq(mentions.groupId, sel.groupId));
    } else if ("msgId" in sel) key = eq(mentions.msgId, sel.msgId);
    else if ("clientMsgId" in sel) key = eq(mentions.clientMsgId, sel.clientMsgId);
    else key = eq(mentions.id, sel.mentionId);
    const updated = await this.ctx.db
      .update(mentions)
      .set({ isRead: true, readAt: sql`coalesce(${mentions.readAt}, ${this.ctx.now()})` })
      .where(this.#visible(me, [key]))
      .returning({ id: mentions.id });
    if (updated.length === 0 && !("all" in sel)) return fail("not_found", "mention not found");
    return ok(updated.length);
  }

  /** Members to offer after '@': the caller excluded, filtered by nickname or account. */
  async suggest(me: bigint, gid: bigint, keyword: string, limit: number) {
    const check = await this.#memberCheck(me, gid);
    if (!check.ok) return check;
    const pattern = keyword ? containsPattern(keyword) : undefined;
    const rows = await this.ctx.db
      .select({
        id: groupMembers.userId,
        role: groupMembers.role,
        nickname: users.nickname,
        avatar: users.avatar,
        accountType: users.accountType,
      })
      .from(groupMembers)
      .innerJoin(users, eq(users.id, groupMembers.userId))
      .where(
        and(
          eq(groupMembers.groupId, gid),
          ne(groupMembers.userId, me),
          pattern ? or(ilike(users.nickname, pattern), ilike(users.account, pattern)) : undefined,
        ),
      )
      .orderBy(asc(users.nickname), asc(groupMembers.userId))
      .limit(limit);
    return ok(
      rows.map((r) => ({
        user_id: r.id,
        uid: r.id,
        nickname: r.nickname,
        avatar: r.avatar,
        account_type: r.accountType,
        role: r.role,
      })),
    );
  }
}
