import { and, inArray, isNull } from "drizzle-orm";
import type { Db } from "../../db/store.ts";
import { users } from "../../db/schema/index.ts";
import { userKeys } from "./rules.ts";

export interface Profile {
  readonly id: bigint;
  readonly account: string;
  readonly nickname: string;
  readonly avatar: string;
  readonly description: string;
  readonly accountType: number;
}

/** Live (not deleted) users among `ids`, by id. */
export async function profiles(db: Db, ids: readonly bigint[]): Promise<Map<bigint, Profile>> {
  const out = new Map<bigint, Profile>();
  if (ids.length === 0) return out;
  const rows = await db
    .select({
      id: users.id,
      account: users.account,
      nickname: users.nickname,
      avatar: users.avatar,
      description: users.description,
      accountType: users.accountType,
    })
    .from(users)
    .where(and(inArray(users.id, [...new Set(ids)]), isNull(users.deletedAt)));
  for (const r of rows) out.set(r.id, r);
  return out;
}

/** The public card of a user in answers and S2C payloads: both id keys. */
export function userCard(id: bigint, p: Profile | undefined) {
  return {
    ...userKeys(id),
    nickname: p?.nickname ?? "",
    avatar: p?.avatar ?? "",
    account_type: p?.accountType ?? 0,
  };
}
