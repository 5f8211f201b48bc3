import { and, asc, eq, or, sql } from "drizzle-orm";
import { friendRequests, friends, users } from "../../db/schema/index.ts";
import { stringifyJson } from "../../protocol/json.ts";
import { fail, ok, type Result } from "../errors.ts";
import { emit, type SocialContext } from "./context.ts";
import { userKeys } from "./rules.ts";
import { profiles, userCard } from "./users.ts";

const PENDING = 0;
const ACCEPTED = 1;
const REJECTED = 2;

/** After a rejection the same request may be sent again only after this (ms): a refusal is not an invitation to re-ask. */
export const RESEND_AFTER_REJECT_MS = 24 * 3_600_000;

export type FriendPayload = Record<string, unknown>;

/** Friend requests and friendships (issue 5 §1). */
export class FriendService {
  constructor(private readonly ctx: SocialContext) {}

  async add(me: bigint, to: bigint, payload: FriendPayload = {}): Promise<Result<Record<string, unknown>>> {
    if (me === to) return fail("bad_request", "cannot send a friend request to yourself");
    if (!(await this.ctx.facts.user(to))) return fail("user_not_found", "user not found");
    const rel = await this.ctx.facts.relation(me, to);
    if (rel.friend) return fail("conflict", "already friends");
    if (rel.denied) return fail("in_denylist", "the user does not accept your requests");
    const now = this.ctx.now();
    const text = stringifyJson(payload);
    const stored = await this.ctx.db
      .insert(friendRequests)
      .values({ fromId: me, toId: to, payload: text, status: PENDING, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({
        target: [friendRequests.fromId, friendRequests.toId],
        set: { payload: text, status: PENDING, updatedAt: now },
        // One statement decides (two nodes racing cannot both re-send): a recent rejection keeps the row as it is.
        setWhere: sql`not (${friendRequests.status} = ${REJECTED} and ${friendRequests.updatedAt} > ${now - RESEND_AFTER_REJECT_MS})`,
      })
      .returning({ status: friendRequests.status });
    if (!stored.length) return fail("rate_limited", "the user declined your request recently; try again later");
    const cards = await profiles(this.ctx.db, [me, to]);
    await emit(this.ctx, [to], "apply_friend", { ...userCard(me, cards.get(me)), from: me, to, payload, created_at: now });
    return ok({ ...userCard(to, cards.get(to)), status: "pending" });
  }

  /** Accepts the pending request `from` → `me`; a missing, accepted or rejected request is refused. */
  async confirm(me: bigint, from: bigint, payload: FriendPayload = {}): Promise<Result<Record<string, unknown>>> {
    const now = this.ctx.now();
    const done = await this.ctx.db.transaction(async (tx) => {
      const updated = await tx
        .update(friendRequests)
        .set({ status: ACCEPTED, updatedAt: now })
        .where(and(eq(friendRequests.fromId, from), eq(friendRequests.toId, me), eq(friendRequests.status, PENDING)))
        .returning({ fromId: friendRequests.fromId });
      if (updated.length === 0) return false;
      await tx
        .insert(friends)
        .values([
          { userId: me, friendId: from, createdAt: now },
          { userId: from, friendId: me, createdAt: now },
        ])
        .onConflictDoNothing();
      // A crossed request (me → from) is settled by this confirmation too.
      await tx
        .update(friendRequests)
        .set({ status: ACCEPTED, updatedAt: now })
        .where(and(eq(friendRequests.fromId, me), eq(friendRequests.toId, from), eq(friendRequests.status, PENDING)));
      return true;
    });
    if (!done) return fail("not_found", "no pending friend request from this user");
    this.ctx.facts.invalidate({ kind: "pair", a: me, b: from });
    const cards = await profiles(this.ctx.db, [me, from]);
    await emit(this.ctx, [from], "apply_friend_confirm", { ...userCard(me, cards.get(me)), from: me, to: from, payload });
    return ok(userCard(from, cards.get(from)));
  }

  async reject(me: bigint, from: bigint): Promise<Result<Record<string, unknown>>> {
    const updated = await this.ctx.db
      .update(friendRequests)
      .set({ status: REJECTED, updatedAt: this.ctx.now() })
      .where(and(eq(friendRequests.fromId, from), eq(friendRequests.toId, me), eq(friendRequests.status, PENDING)))
      .returning({ fromId: friendRequests.fromId });
    if (updated.length === 0) return fail("not_found", "no pending friend request from this user");
    return ok(userKeys(from));
  }

  async remove(me: bigint, other: bigint): Promise<Result<Record<string, unknown>>> {
    const deleted = await this.ctx.db
      .delete(friends)
      .where(
        or(
          and(eq(friends.userId, me), eq(friends.friendId, other)),
          and(eq(friends.userId, other), eq(friends.friendId, me)),
        ),
      )
      .returning({ userId: friends.userId });
    if (deleted.length === 0) return fail("not_found", "not a friend");
    this.ctx.facts.invalidate({ kind: "pair", a: me, b: other });
    return ok(userKeys(other));
  }

  async list(me: bigint) {
    const rows = await this.ctx.db
      .select({
        id: friends.friendId,
        remark: friends.remark,
        nickname: users.nickname,
        avatar: users.avatar,
        accountType: users.accountType,
      })
      .from(friends)
      .innerJoin(users, and(eq(users.id, friends.friendId), sql`${users.deletedAt} is null`))
      .where(eq(friends.userId, me))
      .orderBy(asc(friends.createdAt), asc(friends.friendId));
    return rows.map((r) => ({
      user_id: r.id,
      uid: r.id,
      nickname: r.nickname,
      avatar: r.avatar,
      account_type: r.accountType,
      remark: r.remark,
    }));
  }
}
