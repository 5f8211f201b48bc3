/**
 * Profiles and finding people (docs/accounts.md): my profile, its update and
 * the S2C `user_profile_changed` to friends, another user's card (stranger or
 * friend view), and search by exact account or nickname prefix within each
 * user's `searchable_by`. No transport here.
 */
import { and, eq, inArray, isNull, ne, sql } from "drizzle-orm";
import { friends, users } from "../../db/schema/index.ts";
import { likePrefix, type Db } from "../../db/store.ts";
import type { Notifier } from "../../delivery/ports.ts";
import type { Logger } from "../../log.ts";
import { normaliseAccount } from "../auth/rules.ts";
import { fail, ok, type Result } from "../errors.ts";
import type { SocialFacts } from "../social/facts.ts";
import { userKeys } from "../social/rules.ts";

export const SEARCHABLE_BY = ["everyone", "account", "nobody"] as const;
export type SearchableBy = (typeof SEARCHABLE_BY)[number];
export const NICKNAME_MAX = 64;
export const AVATAR_MAX = 512;
export const SIGNATURE_MAX = 200;
export const KEYWORD_MAX = 64;

/** What a profile update may carry; absent fields stay as they are. */
export interface ProfilePatch {
  readonly nickname?: string | undefined;
  readonly avatar?: string | undefined;
  readonly signature?: string | undefined;
  readonly searchable_by?: SearchableBy | undefined;
}

export interface ProfilesDeps {
  readonly db: Db;
  readonly now: () => number;
  readonly notifier: Notifier;
  readonly facts: SocialFacts;
  readonly log: Logger;
}

const CONTROL = /[\u0000-\u001f\u007f]/;

/** The patch's values, trimmed and checked: nickname 1–64, avatar "" or an http(s) URL, signature ≤ 200, one line each. */
export function checkPatch(patch: ProfilePatch): Result<ProfilePatch> {
  const out: { -readonly [K in keyof ProfilePatch]: ProfilePatch[K] } = {};
  if (patch.nickname !== undefined) {
    const n = patch.nickname.trim();
    if (n === "" || n.length > NICKNAME_MAX || CONTROL.test(n)) return fail("bad_request", `nickname must be 1-${NICKNAME_MAX} characters on one line`);
    out.nickname = n;
  }
  if (patch.avatar !== undefined) {
    const a = patch.avatar.trim();
    if (a.length > AVATAR_MAX || CONTROL.test(a) || (a !== "" && !/^https?:\/\/\S+$/i.test(a))) {
      return fail("bad_request", `avatar must be an http(s) URL of at most ${AVATAR_MAX} characters, or ""`);
    }
    out.avatar = a;
  }
  if (patch.signature !== undefined) {
    const s = patch.signature.trim();
    if (s.length > SIGNATURE_MAX || CONTROL.test(s)) return fail("bad_request", `signature must be at most ${SIGNATURE_MAX} characters on one line`);
    out.signature = s;
  }
  if (patch.searchable_by !== undefined) out.searchable_by = patch.searchable_by;
  return ok(out);
}


const PROFILE = {
  id: users.id,
  account: users.account,
  nickname: users.nickname,
  avatar: users.avatar,
  signature: users.description,
  accountType: users.accountType,
  searchableBy: users.searchableBy,
  createdAt: users.createdAt,
  updatedAt: users.updatedAt,
};

export class Profiles {
  constructor(private readonly d: ProfilesDeps) {}

  async mine(userId: bigint): Promise<Result<Record<string, unknown>>> {
    const [p] = await this.d.db.select(PROFILE).from(users).where(and(eq(users.id, userId), isNull(users.deletedAt)));
    if (!p) return fail("user_not_found", "user not found");
    return ok({
      ...userKeys(p.id),
      account: p.account,
      nickname: p.nickname,
      avatar: p.avatar,
      signature: p.signature,
      account_type: p.accountType,
      searchable_by: p.searchableBy,
      created_at: p.createdAt,
      updated_at: p.updatedAt,
    });
  }

  /**
   * Applies `patch`; when what friends see changed, they and the user's other
   * devices get S2C `user_profile_changed` (stored, like other social notices).
   */
  async update(userId: bigint, deviceId: string, raw: ProfilePatch): Promise<Result<Record<string, unknown>>> {
    const checked = checkPatch(raw);
    if (!checked.ok) return checked;
    const patch = checked.value;
    const [before] = await this.d.db.select(PROFILE).from(users).where(and(eq(users.id, userId), isNull(users.deletedAt)));
    if (!before) return fail("user_not_found", "user not found");
    const next = {
      nickname: patch.nickname ?? before.nickname,
      avatar: patch.avatar ?? before.avatar,
      signature: patch.signature ?? before.signature,
      searchableBy: patch.searchable_by ?? before.searchableBy,
    };
    const visible = next.nickname !== before.nickname || next.avatar !== before.avatar || next.signature !== before.signature;
    if (visible || next.searchableBy !== before.searchableBy) {
      await this.d.db
        .update(users)
        .set({ nickname: next.nickname, avatar: next.avatar, description: next.signature, searchableBy: next.searchableBy, updatedAt: this.d.now() })
        .where(eq(users.id, userId));
    }
    if (visible) await this.#announce(userId, deviceId);
    return this.mine(userId);
  }

  /** Another user's card: a stranger sees nickname, avatar and type; a friend (or oneself) also account and signature. */
  async view(viewer: bigint, target: bigint): Promise<Result<Record<string, unknown>>> {
    const [p] = await this.d.db.select(PROFILE).from(users).where(and(eq(users.id, target), isNull(users.deletedAt)));
    if (!p) return fail("user_not_found", "user not found");
    const friend = viewer === target || (await this.d.facts.relation(viewer, target)).friend;
    const card = { ...userKeys(p.id), nickname: p.nickname, avatar: p.avatar, account_type: p.accountType, is_friend: friend && viewer !== target };
    return ok(friend ? { ...card, account: p.account, signature: p.signature } : card);
  }

  /**
   * Finding people: the user whose account is exactly `keyword` (if they
   * allow `everyone` or `account`), then users whose nickname starts with it
   * (only those allowing `everyone`), nickname order. Deleted, suspended and
   * non-human accounts and the searcher are never listed. An account hit
   * shows no more than a nickname hit: the searcher typed the account.
   */
  async search(viewer: bigint, keyword: string, offset: number, size: number): Promise<Result<{ total: number; list: Record<string, unknown>[] }>> {
    const kw = keyword.trim();
    if (kw === "" || kw.length > KEYWORD_MAX || CONTROL.test(kw)) return fail("bad_request", `keyword must be 1-${KEYWORD_MAX} characters`);
    const findable = and(isNull(users.deletedAt), isNull(users.suspendedAt), eq(users.accountType, 0), ne(users.id, viewer));
    const card = { id: users.id, nickname: users.nickname, avatar: users.avatar, accountType: users.accountType };
    const [hit] = await this.d.db
      .select(card)
      .from(users)
      .where(and(eq(users.account, normaliseAccount(kw)), inArray(users.searchableBy, ["everyone", "account"]), findable));
    const byNickname = and(
      eq(users.searchableBy, "everyone"),
      sql`lower(${users.nickname}) like ${likePrefix(kw.toLowerCase())}`,
      findable,
      hit ? ne(users.id, hit.id) : undefined,
    );
    // The account hit is row 0 of the whole list; nickname rows follow it.
    const skip = hit ? Math.max(0, offset - 1) : offset;
    const take = hit && offset === 0 ? size - 1 : size;
    const [countRow] = await this.d.db.select({ n: sql<number>`count(*)::int` }).from(users).where(byNickname);
    const rows = take > 0
      ? await this.d.db.select(card).from(users).where(byNickname).orderBy(sql`lower(${users.nickname})`, users.id).limit(take).offset(skip)
      : [];
    const page = hit && offset === 0 ? [{ ...hit, matched: "account" }, ...rows.map((r) => ({ ...r, matched: "nickname" }))] : rows.map((r) => ({ ...r, matched: "nickname" }));
    const friendIds = await this.#friendsAmong(viewer, page.map((r) => r.id));
    return ok({
      total: Number(countRow?.n ?? 0) + (hit ? 1 : 0),
      list: page.map((r) => ({
        ...userKeys(r.id),
        nickname: r.nickname,
        avatar: r.avatar,
        account_type: r.accountType,
        is_friend: friendIds.has(r.id),
        matched: r.matched,
      })),
    });
  }

  async #friendsAmong(viewer: bigint, ids: readonly bigint[]): Promise<Set<bigint>> {
    if (ids.length === 0) return new Set();
    const rows = await this.d.db
      .select({ id: friends.friendId })
      .from(friends)
      .where(and(eq(friends.userId, viewer), inArray(friends.friendId, ids as bigint[])));
    return new Set(rows.map((r) => r.id));
  }

  /** Friends and the user's other devices hear of the change; a notifier failure never undoes it (logged). */
  async #announce(userId: bigint, deviceId: string): Promise<void> {
    const [p] = await this.d.db.select(PROFILE).from(users).where(eq(users.id, userId));
    if (!p) return;
    const payload = { ...userKeys(userId), nickname: p.nickname, avatar: p.avatar, signature: p.signature, account_type: p.accountType, updated_at: p.updatedAt };
    const to = [userId, ...(await this.d.facts.friendsOf(userId))];
    try {
      await this.d.notifier.notify(to, "user_profile_changed", payload, deviceId ? { exceptDevice: { userId, deviceId } } : {});
    } catch (err) {
      this.d.log.error("profile notice failed", { err });
    }
  }
}
