import { and, count, desc, eq } from "drizzle-orm";
import { denylist, users } from "../../db/schema/index.ts";
import { fail, ok, type Result } from "../errors.ts";
import type { SocialContext } from "./context.ts";
import { userKeys } from "./rules.ts";

/** Who a user refuses C2C from (issue 5 §2). */
export class DenylistService {
  constructor(private readonly ctx: SocialContext) {}

  async add(me: bigint, denied: bigint): Promise<Result<Record<string, unknown>>> {
    if (me === denied) return fail("bad_request", "cannot deny yourself");
    if (!(await this.ctx.facts.user(denied))) return fail("user_not_found", "user not found");
    await this.ctx.db
      .insert(denylist)
      .values({ userId: me, deniedUserId: denied, createdAt: this.ctx.now() })
      .onConflictDoNothing();
    this.ctx.facts.invalidate({ kind: "pair", a: me, b: denied });
    return ok({ ...userKeys(denied), denied_user_id: denied });
  }

  async remove(me: bigint, denied: bigint): Promise<Result<Record<string, unknown>>> {
    const deleted = await this.ctx.db
      .delete(denylist)
      .where(and(eq(denylist.userId, me), eq(denylist.deniedUserId, denied)))
      .returning({ id: denylist.deniedUserId });
    if (deleted.length === 0) return fail("not_found", "user is not in your denylist");
    this.ctx.facts.invalidate({ kind: "pair", a: me, b: denied });
    return ok({ ...userKeys(denied), denied_user_id: denied });
  }

  async page(me: bigint, offset: number, limit: number) {
    const [{ total } = { total: 0 }] = await this.ctx.db
      .select({ total: count() })
      .from(denylist)
      .where(eq(denylist.userId, me));
    const rows = await this.ctx.db
      .select({
        id: denylist.deniedUserId,
        createdAt: denylist.createdAt,
        nickname: users.nickname,
        avatar: users.avatar,
        accountType: users.accountType,
      })
      .from(denylist)
      .leftJoin(users, eq(users.id, denylist.deniedUserId))
      .where(eq(denylist.userId, me))
      .orderBy(desc(denylist.createdAt), desc(denylist.deniedUserId))
      .limit(limit)
      .offset(offset);
    const list = rows.map((r) => ({
      ...userKeys(r.id),
      denied_user_id: r.id,
      nickname: r.nickname ?? "",
      avatar: r.avatar ?? "",
      account_type: r.accountType ?? 0,
      created_at: r.createdAt,
    }));
    return { total: Number(total), list };
  }
}
