import { and, asc, eq, gt } from "drizzle-orm";
import { channelAdmins, channelSubscriptions, users } from "../../db/schema/index.ts";
import { fail, ok, type Result } from "../errors.ts";
import { isAdminRole, mayAssign, type AdminRole } from "./access.ts";
import { cursorPage, unsubscribe } from "./channels.ts";
import { guard, type ChannelContext } from "./context.ts";

const ROLE_RANGE = "role must be between 1 and 3";

/** Channel admins (roles 1–3) and subscribers, managed by the channel's managers. */
export class ChannelMemberService {
  constructor(private readonly ctx: ChannelContext) {}

  async #userExists(userId: bigint): Promise<boolean> {
    const [u] = await this.ctx.db.select({ id: users.id }).from(users).where(eq(users.id, userId));
    return u !== undefined;
  }

  async #roleOf(channelId: bigint, userId: bigint): Promise<AdminRole | undefined> {
    const [a] = await this.ctx.db
      .select({ role: channelAdmins.role })
      .from(channelAdmins)
      .where(and(eq(channelAdmins.channelId, channelId), eq(channelAdmins.userId, userId)));
    return a && isAdminRole(a.role) ? a.role : undefined;
  }

  /** Adds an admin, or changes the role of an existing one (the caller must outrank both roles). */
  async addAdmin(me: bigint, channelId: bigint, userId: bigint, role: number): Promise<Result<object>> {
    if (!isAdminRole(role)) return fail("channel_role_invalid", ROLE_RANGE);
    const g = await guard(this.ctx, me, channelId, "manage_admins");
    if (!g.ok) return g;
    if (userId === g.value.channel.ownerId) return fail("bad_request", "the creator cannot be an admin of their own channel");
    if (!(await this.#userExists(userId))) return fail("user_not_found", "user not found");
    const current = await this.#roleOf(channelId, userId);
    if (!mayAssign(g.value.rel, role) || (current !== undefined && !mayAssign(g.value.rel, current))) {
      return fail("channel_access_denied", "your role cannot assign this role");
    }
    await this.ctx.db
      .insert(channelAdmins)
      .values({ channelId, userId, role, createdAt: this.ctx.now() })
      .onConflictDoUpdate({ target: [channelAdmins.channelId, channelAdmins.userId], set: { role } });
    return ok({});
  }

  async updateRole(me: bigint, channelId: bigint, userId: bigint, role: number): Promise<Result<object>> {
    if (!isAdminRole(role)) return fail("channel_role_invalid", ROLE_RANGE);
    const g = await guard(this.ctx, me, channelId, "manage_admins");
    if (!g.ok) return g;
    const current = await this.#roleOf(channelId, userId);
    if (current === undefined) return fail("not_found", "not an admin of this channel");
    if (!mayAssign(g.value.rel, role) || !mayAssign(g.value.rel, current)) {
      return fail("channel_access_denied", "your role cannot assign this role");
    }
    await this.ctx.db.update(channelAdmins).set({ role }).where(and(eq(channelAdmins.channelId, channelId), eq(channelAdmins.userId, userId)));
    return ok({});
  }

  async removeAdmin(me: bigint, channelId: bigint, userId: bigint): Promise<Result<object>> {
    const g = await guard(this.ctx, me, channelId, "manage_admins");
    if (!g.ok) return g;
    const current = await this.#roleOf(channelId, userId);
    if (current === undefined) return fail("not_found", "not an admin of this channel");
    if (!mayAssign(g.value.rel, current)) return fail("channel_access_denied", "your role cannot remove this admin");
    await this.ctx.db.delete(channelAdmins).where(and(eq(channelAdmins.channelId, channelId), eq(channelAdmins.userId, userId)));
    return ok({});
  }

  async admins(me: bigint, channelId: bigint) {
    const g = await guard(this.ctx, me, channelId, "list_admins");
    if (!g.ok) return g;
    const rows = await this.ctx.db
      .select({ userId: channelAdmins.userId, role: channelAdmins.role, createdAt: channelAdmins.createdAt, nickname: users.nickname, avatar: users.avatar })
      .from(channelAdmins)
      .leftJoin(users, eq(users.id, channelAdmins.userId))
      .where(eq(channelAdmins.channelId, channelId))
      .orderBy(asc(channelAdmins.role), asc(channelAdmins.userId));
    return ok({
      list: rows.map((r) => ({
        user_id: r.userId,
        uid: r.userId,
        role: r.role,
        nickname: r.nickname ?? "",
        avatar: r.avatar ?? "",
        created_at: r.createdAt,
      })),
    });
  }

  /** By user id, `cursor` exclusive. */
  async subscribers(me: bigint, channelId: bigint, cursor: bigint, limit: number) {
    const g = await guard(this.ctx, me, channelId, "manage_subscribers");
    if (!g.ok) return g;
    const rows = await this.ctx.db
      .select({
        userId: channelSubscriptions.userId,
        readSeq: channelSubscriptions.readSeq,
        subscribedAt: channelSubscriptions.subscribedAt,
        nickname: users.nickname,
        avatar: users.avatar,
      })
      .from(channelSubscriptions)
      .leftJoin(users, eq(users.id, channelSubscriptions.userId))
      .where(and(eq(channelSubscriptions.channelId, channelId), gt(channelSubscriptions.userId, cursor)))
      .orderBy(asc(channelSubscriptions.userId))
      .limit(limit + 1);
    const page = cursorPage(rows, limit, (r) => r.userId);
    return ok({
      ...page,
      list: page.list.map((r) => ({
        user_id: r.userId,
        uid: r.userId,
        nickname: r.nickname ?? "",
        avatar: r.avatar ?? "",
        read_seq: r.readSeq,
        subscribed_at: r.subscribedAt,
      })),
    });
  }

  async removeSubscriber(me: bigint, channelId: bigint, userId: bigint): Promise<Result<object>> {
    const g = await guard(this.ctx, me, channelId, "manage_subscribers");
    if (!g.ok) return g;
    if (!(await unsubscribe(this.ctx, userId, channelId))) return fail("not_found", "not a subscriber of this channel");
    return ok({});
  }
}
