import { and, asc, count, eq, ilike, isNull, or } from "drizzle-orm";
import { z } from "zod";
import { ConfigError, fields } from "../../config/index.ts";
import { users } from "../../db/schema/index.ts";
import { tryParseJson } from "../../protocol/json.ts";
import type { Db } from "../../db/store.ts";
import type { IdGenerator } from "../../ids/tsid.ts";
import { containsPattern } from "./mentions.ts";

export const AI_ASSISTANT = 1;

/** §2.9 assistant record (with uid beside user_id, §9.4). */
export function assistantJson(r: { id: bigint; nickname: string; avatar: string; description: string; accountType: number }) {
  return {
    user_id: r.id,
    uid: r.id,
    nickname: r.nickname,
    avatar: r.avatar,
    description: r.description,
    account_type: r.accountType,
  };
}

export async function listAssistants(db: Db, q: { offset: number; limit: number; keyword?: string }) {
  const pattern = q.keyword ? containsPattern(q.keyword) : undefined;
  const where = and(
    eq(users.accountType, AI_ASSISTANT),
    isNull(users.deletedAt),
    pattern ? or(ilike(users.nickname, pattern), ilike(users.description, pattern), ilike(users.account, pattern)) : undefined,
  );
  const [{ total } = { total: 0 }] = await db.select({ total: count() }).from(users).where(where);
  const rows = await db
    .select({
      id: users.id,
      nickname: users.nickname,
      avatar: users.avatar,
      description: users.description,
      accountType: users.accountType,
    })
    .from(users)
    .where(where)
    .orderBy(asc(users.id))
    .limit(q.limit)
    .offset(q.offset);
  return { total: Number(total), list: rows.map(assistantJson) };
}

export const assistantSpec = z.object({
  account: z.string().min(1).max(64),
  nickname: z.string().max(64).default(""),
  avatar: z.string().max(1024).default(""),
  description: z.string().max(2000).default(""),
});
export type AssistantSpec = z.input<typeof assistantSpec>;

/**
 * Admin-side seeding: creates each assistant account (account_type 1, no
 * usable password) or updates its card when the account exists. Idempotent.
 * Returns the user ids in input order.
 */
export async function seedAssistants(db: Db, ids: IdGenerator, specs: readonly AssistantSpec[]): Promise<bigint[]> {
  const out: bigint[] = [];
  for (const raw of specs) {
    const s = assistantSpec.parse(raw);
    const [row] = await db
      .insert(users)
      .values({
        id: ids.next(),
        account: s.account,
        passwordHash: "!", // matches no password hash: assistants do not log in with a password
        nickname: s.nickname,
        avatar: s.avatar,
        description: s.description,
        accountType: AI_ASSISTANT,
      })
      .onConflictDoUpdate({
        target: users.account,
        set: { nickname: s.nickname, avatar: s.avatar, description: s.description, accountType: AI_ASSISTANT },
      })
      .returning({ id: users.id });
    out.push(row!.id);
  }
  return out;
}

/** IBIS_ASSISTANTS (JSON array of AssistantSpec); empty → none. A malformed value stops the start (ConfigError). */
export function assistantsFromConfig(text: string): AssistantSpec[] {
  if (text.trim() === "") return [];
  const parsed = tryParseJson(text);
  const specs = parsed.ok ? z.array(assistantSpec).safeParse(parsed.value) : undefined;
  if (!specs?.success) {
    throw new ConfigError(`${fields.assistants.env}: must be a JSON array of {account, nickname?, avatar?, description?}`);
  }
  return specs.data;
}
