import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import { adminAudit, admins } from "../../db/schema/index.ts";
import type { Db } from "../../db/store.ts";
import type { IdGenerator } from "../../ids/tsid.ts";
import { parseJson, stringifyJson } from "../../protocol/json.ts";

/** Who did what in the admin console (table admin_audit, append-only; docs/accounts.md "Admin"). */
export class AdminAudit {
  constructor(
    private readonly db: Db,
    private readonly ids: IdGenerator,
    private readonly now: () => number,
  ) {}

  async record(adminId: bigint, action: string, targetUserId: bigint | undefined, detail: Record<string, unknown> = {}): Promise<void> {
    await this.db.insert(adminAudit).values({
      id: this.ids.next(),
      adminId,
      action,
      targetUserId: targetUserId ?? null,
      detail: stringifyJson(detail),
      createdAt: this.now(),
    });
  }

  /** Newest first, optionally about one user. */
  async page(offset: number, size: number, targetUserId?: bigint): Promise<{ total: number; list: Record<string, unknown>[] }> {
    const where: SQL | undefined = targetUserId === undefined ? undefined : eq(adminAudit.targetUserId, targetUserId);
    const [count] = await this.db.select({ n: sql<number>`count(*)::int` }).from(adminAudit).where(where);
    const rows = await this.db
      .select({ a: adminAudit, account: admins.account })
      .from(adminAudit)
      .leftJoin(admins, and(eq(admins.id, adminAudit.adminId)))
      .where(where)
      .orderBy(desc(adminAudit.id))
      .limit(size)
      .offset(offset);
    return {
      total: Number(count?.n ?? 0),
      list: rows.map(({ a, account }) => ({
        id: a.id,
        admin_id: a.adminId,
        admin_account: account ?? "",
        action: a.action,
        target_user_id: a.targetUserId,
        detail: parseJson(a.detail),
        created_at: a.createdAt,
      })),
    };
  }
}
