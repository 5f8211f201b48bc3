/**
 * The admin side of users (docs/accounts.md "Admin"): list and search,
 * suspend and unsuspend. Suspension marks the account, revokes every session
 * of it and cuts its sockets on every node; unsuspending lets it log in again
 * (old tokens stay revoked). No transport here.
 */
import { and, desc, eq, isNotNull, isNull, or, sql, type SQL } from "drizzle-orm";
import { users } from "../../db/schema/index.ts";
import { likePrefix, type Db } from "../../db/store.ts";
import { normaliseAccount } from "../auth/rules.ts";
import type { SessionCutter } from "../auth/revocation.ts";
import type { DeviceSessions } from "../auth/sessions.ts";
import { fail, ok, type Result } from "../errors.ts";
import { userKeys } from "../social/rules.ts";
import { toId } from "../../ids/tsid.ts";

export const USER_STATES = ["all", "active", "suspended", "deleted"] as const;
export type UserState = (typeof USER_STATES)[number];

const STATE_WHERE: Record<UserState, SQL | undefined> = {
  all: undefined,
  active: and(isNull(users.deletedAt), isNull(users.suspendedAt)),
  suspended: and(isNull(users.deletedAt), isNotNull(users.suspendedAt)),
  deleted: isNotNull(users.deletedAt),
};


export class AdminUsers {
  constructor(
    private readonly db: Db,
    private readonly sessions: DeviceSessions,
    private readonly cutter: SessionCutter,
    private readonly now: () => number,
  ) {}

  /** Newest first. `keyword`: an exact user id, or an account or nickname prefix (case-insensitive). */
  async page(keyword: string, state: UserState, offset: number, size: number): Promise<{ total: number; list: Record<string, unknown>[] }> {
    const kw = keyword.trim();
    const id = /^\d{1,20}$/.test(kw) ? toId(kw) : undefined;
    const match =
      kw === ""
        ? undefined
        : or(
            id === undefined ? undefined : eq(users.id, id),
            sql`${users.account} like ${likePrefix(normaliseAccount(kw))}`,
            sql`lower(${users.nickname}) like ${likePrefix(kw.toLowerCase())}`,
          );
    const where = and(match, STATE_WHERE[state]);
    const [count] = await this.db.select({ n: sql<number>`count(*)::int` }).from(users).where(where);
    const rows = await this.db.select().from(users).where(where).orderBy(desc(users.id)).limit(size).offset(offset);
    return {
      total: Number(count?.n ?? 0),
      list: rows.map((u) => ({
        ...userKeys(u.id),
        account: u.account,
        nickname: u.nickname,
        avatar: u.avatar,
        account_type: u.accountType,
        searchable_by: u.searchableBy,
        state: u.deletedAt !== null ? "deleted" : u.suspendedAt !== null ? "suspended" : "active",
        created_at: u.createdAt,
        suspended_at: u.suspendedAt,
        deleted_at: u.deletedAt,
      })),
    };
  }

  /** Suspends a live account: sessions revoked, sockets cut everywhere. Suspending again changes nothing. */
  async suspend(userId: bigint): Promise<Result<{ suspended_at: number; changed: boolean }>> {
    const t = this.now();
    const done = await this.db
      .update(users)
      .set({ suspendedAt: t, updatedAt: t })
      .where(and(eq(users.id, userId), isNull(users.deletedAt), isNull(users.suspendedAt)))
      .returning({ at: users.suspendedAt });
    if (done.length === 0) {
      const [u] = await this.db.select({ at: users.suspendedAt }).from(users).where(and(eq(users.id, userId), isNull(users.deletedAt)));
      if (!u) return fail("user_not_found", "user not found");
      return ok({ suspended_at: u.at!, changed: false });
    }
    await this.sessions.revokeAll(userId);
    this.cutter.cut({ userId, reason: "suspended" });
    return ok({ suspended_at: t, changed: true });
  }

  async unsuspend(userId: bigint): Promise<Result<{ changed: boolean }>> {
    const done = await this.db
      .update(users)
      .set({ suspendedAt: null, updatedAt: this.now() })
      .where(and(eq(users.id, userId), isNull(users.deletedAt), isNotNull(users.suspendedAt)))
      .returning({ id: users.id });
    if (done.length === 0) {
      const [u] = await this.db.select({ id: users.id }).from(users).where(and(eq(users.id, userId), isNull(users.deletedAt)));
      if (!u) return fail("user_not_found", "user not found");
      return ok({ changed: false });
    }
    return ok({ changed: true });
  }
}
