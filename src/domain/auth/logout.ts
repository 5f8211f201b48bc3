import { eq, sql } from "drizzle-orm";
import { accountLogouts } from "../../db/schema/index.ts";
import type { Store } from "../../db/store.ts";

const DAY_MS = 86_400_000;
export const REASON_MAX = 500;

export interface LogoutRequest {
  readonly requestedAt: number;
  readonly deleteAfterAt: number;
}

/**
 * Account logout (§4.1 apply_logout / cancel_logout): a request schedules the
 * deletion `graceDays` later; cancelling before then removes it; `sweep`
 * deletes accounts whose time has come. Applying twice keeps the first
 * deadline (a repeated tap must not push the deletion back).
 */
export class AccountLogout {
  constructor(
    private readonly store: Store,
    private readonly graceDays: number,
    private readonly now: () => number,
  ) {}

  async apply(userId: bigint, reason: string): Promise<LogoutRequest> {
    const t = this.now();
    const [row] = await this.store.db
      .insert(accountLogouts)
      .values({ userId, reason: reason.slice(0, REASON_MAX), requestedAt: t, deleteAfterAt: t + this.graceDays * DAY_MS })
      .onConflictDoUpdate({ target: accountLogouts.userId, set: { reason: sql`excluded.reason` } })
      .returning({ requestedAt: accountLogouts.requestedAt, deleteAfterAt: accountLogouts.deleteAfterAt });
    return row!;
  }

  /** True when a pending request was cancelled. */
  async cancel(userId: bigint): Promise<boolean> {
    const gone = await this.store.db
      .delete(accountLogouts)
      .where(eq(accountLogouts.userId, userId))
      .returning({ userId: accountLogouts.userId });
    return gone.length === 1;
  }

  async pending(userId: bigint): Promise<LogoutRequest | undefined> {
    const [row] = await this.store.db
      .select({ requestedAt: accountLogouts.requestedAt, deleteAfterAt: accountLogouts.deleteAfterAt })
      .from(accountLogouts)
      .where(eq(accountLogouts.userId, userId));
    return row;
  }

  /**
   * Deletes every account whose grace period is over, in one statement: the
   * row is kept (ids stay unique, messages keep their sender) but marked
   * deleted, its profile and password cleared and its account name freed.
   * Returns the ids deleted.
   */
  async sweep(): Promise<bigint[]> {
    const t = this.now();
    const rows = await this.store.rows<{ id: bigint | string }>(sql`
      with due as (delete from account_logout where delete_after_at <= ${t} returning user_id)
      update users set deleted_at = ${t}, updated_at = ${t}, password_hash = '', nickname = '', avatar = '',
        description = '', account = 'deleted.' || id::text
      where id in (select user_id from due) and deleted_at is null
      returning id`);
    return rows.map((r) => BigInt(r.id));
  }
}
