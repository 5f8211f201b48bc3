import { and, asc, count, desc, eq, inArray, isNull, ne, sql, type SQL } from "drizzle-orm";
import { groupJoinRequests, groupMembers, groups, users } from "../../db/schema/index.ts";
import { closeSpans, openSpans } from "../../delivery/membership.ts";
import { fail, ok, type Result } from "../errors.ts";
import { emit, membership, type SocialContext } from "./context.ts";
import type { GroupFacts } from "./facts.ts";
import { can, type GroupAction, type GroupAttr, type GroupRole } from "./rules.ts";
import { profiles } from "./users.ts";

type GroupRow = typeof groups.$inferSelect;

export interface GroupEdit {
  readonly title?: string;
  readonly avatar?: string;
  readonly introduction?: string;
}

const memberCount = sql<number>`(select count(*) from im_group_member m where m.group_id = ${groups.id})`.mapWith(Number);
const roleRank = sql`case ${groupMembers.role} when 'owner' then 0 when 'manager' then 1 else 2 end`;

export function groupJson(g: GroupRow, extra: { memberCount?: number; role?: GroupRole } = {}) {
  return {
    group_id: g.id,
    gid: g.id,
    owner_uid: g.ownerId,
    owner_user_id: g.ownerId,
    title: g.title,
    avatar: g.avatar,
    introduction: g.introduction,
    ...(extra.memberCount !== undefined ? { member_count: extra.memberCount } : {}),
    ...(extra.role ? { role: extra.role } : {}),
    created_at: g.createdAt,
    updated_at: g.updatedAt,
  };
}

const memberFields = {
  userId: groupMembers.userId,
  role: groupMembers.role,
  joinedAt: groupMembers.joinedAt,
  nickname: users.nickname,
  avatar: users.avatar,
  accountType: users.accountType,
};
type MemberRow = { userId: bigint; role: string; joinedAt: number; nickname: string | null; avatar: string | null; accountType: number | null };

function memberJson(groupId: bigint, r: MemberRow) {
  return {
    user_id: r.userId,
    uid: r.userId,
    group_id: groupId,
    gid: groupId,
    role: r.role,
    nickname: r.nickname ?? "",
    avatar: r.avatar ?? "",
    account_type: r.accountType ?? 0,
    joined_at: r.joinedAt,
  };
}

/** Groups, members and roles (issue 5 §3, §4). */
export class GroupService {
  constructor(private readonly ctx: SocialContext) {}

  /** The group and the caller's role when the caller may do `action` (fresh from the database). */
  async access(me: bigint, gid: bigint, action: GroupAction): Promise<Result<GroupFacts & { role: GroupRole }>> {
    const member = await membership(this.ctx, me, gid);
    if (!member.ok || can(member.value.role, action)) return member;
    return fail("permission_denied", `a ${member.value.role} cannot ${action.replace("_", " ")} this group`);
  }

  async #row(gid: bigint): Promise<GroupRow> {
    const [row] = await this.ctx.db.select().from(groups).where(eq(groups.id, gid));
    return row!;
  }

  async #members(gid: bigint, where?: SQL) {
    const rows = await this.ctx.db
      .select(memberFields)
      .from(groupMembers)
      .leftJoin(users, eq(users.id, groupMembers.userId))
      .where(where ? and(eq(groupMembers.groupId, gid), where) : eq(groupMembers.groupId, gid))
      .orderBy(roleRank, asc(groupMembers.joinedAt), asc(groupMembers.userId));
    return rows.map((r) => memberJson(gid, r));
  }

  async #missingUser(ids: readonly bigint[]): Promise<bigint | undefined> {
    const found = await profiles(this.ctx.db, ids);
    return ids.find((id) => !found.has(id));
  }

  async #announceJoin(gid: bigint, title: string, operator: bigint, joined: readonly bigint[]) {
    const facts = await this.ctx.facts.group(gid, true);
    if (!facts) return;
    await emit(this.ctx, facts.ids, "group_member_join", {
      group_id: gid,
      gid,
      title,
      user_ids: joined,
      uids: joined,
      operator_user_id: operator,
      operator_uid: operator,
    });
  }

  async create(me: bigint, memberUids: readonly bigint[], title = "") {
    const invited = [...new Set(memberUids)].filter((id) => id !== me);
    const missing = await this.#missingUser(invited);
    if (missing !== undefined) return fail("user_not_found", `user not found: ${missing}`);
    const now = this.ctx.now();
    const gid = this.ctx.ids.next();
    await this.ctx.db.transaction(async (tx) => {
      await tx.insert(groups).values({ id: gid, ownerId: me, title, createdAt: now, updatedAt: now });
      await tx.insert(groupMembers).values([
        { groupId: gid, userId: me, role: "owner", joinedAt: now },
        ...invited.map((userId) => ({ groupId: gid, userId, role: "member", joinedAt: now })),
      ]);
      await openSpans(tx, gid, [me, ...invited]);
    });
    this.ctx.facts.invalidate({ kind: "group", groupId: gid });
    if (invited.length) await this.#announceJoin(gid, title, me, invited);
    const row = await this.#row(gid);
    return ok({ group: groupJson(row, { memberCount: invited.length + 1, role: "owner" }), member_list: await this.#members(gid) });
  }

  async edit(me: bigint, gid: bigint, change: GroupEdit) {
    const access = await this.access(me, gid, "edit");
    if (!access.ok) return access;
    const set = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)) as GroupEdit;
    await this.ctx.db.update(groups).set({ ...set, updatedAt: this.ctx.now() }).where(eq(groups.id, gid));
    return ok({ group: groupJson(await this.#row(gid), { memberCount: access.value.ids.length, role: access.value.role }) });
  }

  async detail(me: bigint, gid: bigint) {
    const access = await this.access(me, gid, "read");
    if (!access.ok) return access;
    return ok({ group: groupJson(await this.#row(gid), { memberCount: access.value.ids.length, role: access.value.role }) });
  }

  async dissolve(me: bigint, gid: bigint) {
    const access = await this.access(me, gid, "dissolve");
    if (!access.ok) return access;
    const now = this.ctx.now();
    const done = await this.ctx.db.transaction(async (tx) => {
      const updated = await tx
        .update(groups)
        .set({ dissolvedAt: now, updatedAt: now })
        .where(and(eq(groups.id, gid), isNull(groups.dissolvedAt)))
        .returning({ id: groups.id });
      if (updated.length === 0) return false;
      await tx.delete(groupMembers).where(eq(groupMembers.groupId, gid));
      await tx.delete(groupJoinRequests).where(eq(groupJoinRequests.groupId, gid));
      await closeSpans(tx, gid);
      return true;
    });
    if (!done) return fail("not_found", "group not found");
    this.ctx.facts.invalidate({ kind: "group", groupId: gid });
    await emit(this.ctx, access.value.ids, "group_dissolve", {
      group_id: gid,
      gid,
      operator_user_id: me,
      operator_uid: me,
    });
    return ok({ group_id: gid, gid });
  }

  /**
   * Self-join (no `memberUids`, or only the caller) or invitation by a member.
   * With self-join off (the default) a self-join is a request: the owner and
   * managers are told (S2C group_member_join with `pending: true`) and one of
   * them admits the requester by inviting them (docs/social.md "Joining").
   */
  async join(me: bigint, gid: bigint, memberUids: readonly bigint[]): Promise<Result<Record<string, unknown>>> {
    const facts = await this.ctx.facts.group(gid, true);
    if (!facts) return fail("not_found", "group not found");
    const self = memberUids.length === 0 || (memberUids.length === 1 && memberUids[0] === me);
    let joining: bigint[];
    if (self) {
      if (facts.roles.has(me)) return fail("conflict", "already a member");
      if (!this.ctx.config.groupSelfJoin) return this.#request(me, gid, facts.roles);
      joining = [me];
    } else {
      const role = facts.roles.get(me);
      if (!role) return fail("not_group_member", "only members can invite");
      if (!can(role, "invite")) return fail("permission_denied", "you cannot invite to this group");
      const missing = await this.#missingUser([...new Set(memberUids)]);
      if (missing !== undefined) return fail("user_not_found", `user not found: ${missing}`);
      joining = [...new Set(memberUids)].filter((id) => !facts.roles.has(id));
      if (joining.length === 0) return fail("conflict", "already members");
    }
    const now = this.ctx.now();
    await this.ctx.db.transaction(async (tx) => {
      await tx
        .insert(groupMembers)
        .values(joining.map((userId) => ({ groupId: gid, userId, role: "member", joinedAt: now })))
        .onConflictDoNothing();
      await openSpans(tx, gid, joining);
      await tx.delete(groupJoinRequests).where(and(eq(groupJoinRequests.groupId, gid), inArray(groupJoinRequests.userId, joining)));
    });
    this.ctx.facts.invalidate({ kind: "group", groupId: gid });
    const row = await this.#row(gid);
    await this.#announceJoin(gid, row.title, me, joining);
    return ok({ group: groupJson(row), member_list: await this.#members(gid, inArray(groupMembers.userId, joining)) });
  }

  /** A request to join, recorded once; the owner and managers are told each time it is made. */
  async #request(me: bigint, gid: bigint, roles: ReadonlyMap<bigint, GroupRole>): Promise<Result<Record<string, unknown>>> {
    await this.ctx.db.insert(groupJoinRequests).values({ groupId: gid, userId: me, createdAt: this.ctx.now() }).onConflictDoNothing();
    const admins = [...roles].filter(([, role]) => can(role, "admit")).map(([id]) => id);
    const row = await this.#row(gid);
    await emit(this.ctx, admins, "group_member_join", {
      group_id: gid,
      gid,
      title: row.title,
      user_ids: [me],
      uids: [me],
      operator_user_id: me,
      operator_uid: me,
      pending: true,
    });
    return ok({ group_id: gid, gid, status: "pending", member_list: [] });
  }

  async leave(me: bigint, gid: bigint) {
    const access = await this.access(me, gid, "leave");
    if (!access.ok) {
      return access.error.kind === "permission_denied"
        ? fail("permission_denied", "the owner cannot leave; dissolve the group instead")
        : access;
    }
    await this.ctx.db.transaction(async (tx) => {
      await tx.delete(groupMembers).where(and(eq(groupMembers.groupId, gid), eq(groupMembers.userId, me)));
      await closeSpans(tx, gid, [me]);
    });
    this.ctx.facts.invalidate({ kind: "group", groupId: gid });
    await emit(this.ctx, access.value.ids, "group_member_leave", { group_id: gid, gid, user_id: me, uid: me });
    return ok({ group_id: gid, gid });
  }

  /** Owner only: make a member a manager or a manager a member. */
  async setRole(me: bigint, gid: bigint, target: bigint, role: "manager" | "member") {
    const access = await this.access(me, gid, "set_role");
    if (!access.ok) return access;
    const current = access.value.roles.get(target);
    if (!current) return fail("not_group_member", "the user is not a member of this group");
    if (current === "owner") return fail("permission_denied", "the owner's role cannot change");
    await this.ctx.db
      .update(groupMembers)
      .set({ role })
      .where(and(eq(groupMembers.groupId, gid), eq(groupMembers.userId, target)));
    this.ctx.facts.invalidate({ kind: "group", groupId: gid });
    return ok({ group_id: gid, gid, user_id: target, uid: target, role });
  }

  async memberPage(me: bigint, gid: bigint, offset: number, limit: number) {
    const access = await this.access(me, gid, "read");
    if (!access.ok) return access;
    const rows = await this.ctx.db
      .select(memberFields)
      .from(groupMembers)
      .leftJoin(users, eq(users.id, groupMembers.userId))
      .where(eq(groupMembers.groupId, gid))
      .orderBy(roleRank, asc(groupMembers.joinedAt), asc(groupMembers.userId))
      .limit(limit)
      .offset(offset);
    return ok({ total: access.value.ids.length, list: rows.map((r) => memberJson(gid, r)) });
  }

  /** The caller's groups by attr: owner (owned), join (joined, not owned), manager (managed). */
  async page(me: bigint, attr: GroupAttr, offset: number, limit: number) {
    const roleCond =
      attr === "owner" ? eq(groupMembers.role, "owner") : attr === "manager" ? eq(groupMembers.role, "manager") : ne(groupMembers.role, "owner");
    const where = and(eq(groupMembers.userId, me), roleCond, isNull(groups.dissolvedAt));
    const [{ total } = { total: 0 }] = await this.ctx.db
      .select({ total: count() })
      .from(groupMembers)
      .innerJoin(groups, eq(groups.id, groupMembers.groupId))
      .where(where);
    const rows = await this.ctx.db
      .select({ g: groups, role: groupMembers.role, memberCount })
      .from(groupMembers)
      .innerJoin(groups, eq(groups.id, groupMembers.groupId))
      .where(where)
      .orderBy(desc(groupMembers.joinedAt), desc(groups.id))
      .limit(limit)
      .offset(offset);
    return {
      total: Number(total),
      list: rows.map((r) => groupJson(r.g, { memberCount: r.memberCount, role: r.role as GroupRole })),
    };
  }
}
