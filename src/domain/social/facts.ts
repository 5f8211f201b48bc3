import { and, eq, isNull, sql } from "drizzle-orm";
import { BatchLoader } from "../../db/batch-load.ts";
import { groupMembers, groups, users, friends } from "../../db/schema/index.ts";
import { decimalArray, type Store } from "../../db/store.ts";
import { TtlCache } from "./cache.ts";
import { isGroupRole, type GroupRole } from "./rules.ts";

export interface UserFacts {
  readonly accountType: number;
}

/** Between a sender and a recipient: are they friends, has the recipient denied the sender? */
export interface Relation {
  readonly friend: boolean;
  readonly denied: boolean;
}

export interface GroupFacts {
  readonly ownerId: bigint;
  readonly roles: ReadonlyMap<bigint, GroupRole>;
  readonly ids: readonly bigint[];
}

/** What changed, for listeners that carry invalidations to other nodes. */
export type Invalidation =
  | { readonly kind: "pair"; readonly a: bigint; readonly b: bigint }
  | { readonly kind: "group"; readonly groupId: bigint }
  | { readonly kind: "user"; readonly userId: bigint };

/**
 * The relation cache's key: sender, then recipient (a relation is one direction), as one number, from · 2^64 +
 * (to mod 2^64): a string of the two cost every message ~0.5 µs to build and hash, this ~0.1 (bench/FINDINGS.md,
 * sixteenth section). One-to-one for every sender and any recipient in sint64 (the ids' range, pb.ts), negative
 * ones included; `pairOfKey` reads it back.
 */
const MASK64 = (1n << 64n) - 1n;
export const pairKey = (from: bigint, to: bigint): bigint => (from << 64n) | (to < 0n ? to & MASK64 : to);
export const pairOfKey = (key: bigint): [from: bigint, to: bigint] => [BigInt.asIntN(64, key >> 64n), BigInt.asIntN(64, key)];

export interface CacheSettings {
  readonly ttlMs: number;
  readonly max: number;
}

/**
 * The facts delivery asks per message, cached. Every write in this area
 * calls `invalidate` after it commits. A load that raced with an
 * invalidation is not cached (epoch check), so no stale value outlives a change
 * on this node; other nodes learn through `onInvalidate` listeners (src/node.ts
 * sends each change on the bus) or, failing that, the TTL.
 */
export class SocialFacts {
  readonly #users: TtlCache<bigint, UserFacts | null>;
  readonly #relations: TtlCache<bigint, Relation>;
  readonly #groups: TtlCache<bigint, GroupFacts | null>;
  readonly #friends: TtlCache<bigint, readonly bigint[]>;
  readonly #listeners: ((change: Invalidation) => void)[] = [];
  #epoch = 0;

  constructor(private readonly store: Store, settings: CacheSettings, now: () => number) {
    this.#users = new TtlCache(settings.ttlMs, settings.max, now);
    this.#relations = new TtlCache(settings.ttlMs, settings.max, now);
    this.#groups = new TtlCache(settings.ttlMs, settings.max, now);
    this.#friends = new TtlCache(settings.ttlMs, settings.max, now);
    // Refresh-ahead (TtlCache), asked from inside a message's routing: the loaders are async (nothing throws into
    // it), and a failed background read leaves the entry to expire and be read by its next asker.
    const again = <K, V>(cache: TtlCache<K, V>, load: (key: K) => Promise<V>) =>
      cache.onDue((key) => void this.#cached(cache, key, () => load(key), true).catch(() => {}));
    again(this.#users, (id) => this.#loadUser(id));
    again(this.#relations, (key) => this.#loadRelation(...pairOfKey(key)));
    again(this.#groups, (id) => this.#loadGroup(id));
    again(this.#friends, (id) => this.#friendLists.load(id));
  }

  onInvalidate(listener: (change: Invalidation) => void): void {
    this.#listeners.push(listener);
  }

  /** Drops what `change` may have made stale; `remote` changes (from other nodes) are not re-announced. */
  invalidate(change: Invalidation, remote = false): void {
    this.#epoch++;
    switch (change.kind) {
      case "pair":
        this.#relations.delete(pairKey(change.a, change.b));
        this.#relations.delete(pairKey(change.b, change.a));
        this.#friends.delete(change.a);
        this.#friends.delete(change.b);
        break;
      case "group":
        this.#groups.delete(change.groupId);
        break;
      case "user":
        this.#users.delete(change.userId);
        break;
    }
    if (!remote) for (const l of this.#listeners) l(change);
  }

  /**
   * The cached value, or a read shared by everyone asking while it runs (`fresh` asks read anew, and later
   * askers share theirs). A read that raced with an invalidation is not cached; the invalidated key's read is
   * dropped, so an asker after the change reads again.
   */
  #cached<K, V>(cache: TtlCache<K, V>, key: K, load: () => Promise<V>, fresh = false): Promise<V> {
    if (!fresh) {
      const hit = cache.get(key);
      if (hit) return Promise.resolve(hit.value);
      const under = cache.loading(key);
      if (under) return under;
    }
    const epoch = this.#epoch;
    const read = load().then((value) => {
      if (epoch === this.#epoch) cache.set(key, value);
      return value;
    });
    cache.track(key, read);
    return read;
  }

  /**
   * What the cache holds now, without loading (undefined: not cached). Delivery asks these first for each message:
   * a warm answer then costs no promise (src/delivery/route.ts `routeNow`).
   */
  userNow(userId: bigint): UserFacts | null | undefined {
    return this.#users.get(userId)?.value;
  }

  relationNow(from: bigint, to: bigint): Relation | undefined {
    return this.#relations.get(pairKey(from, to))?.value;
  }

  groupNow(groupId: bigint): GroupFacts | null | undefined {
    return this.#groups.get(groupId)?.value;
  }

  friendsNow(userId: bigint): readonly bigint[] | undefined {
    return this.#friends.get(userId)?.value;
  }

  /** A live user's facts; null when there is no such user or it is deleted. */
  user(userId: bigint): Promise<UserFacts | null> {
    return this.#cached(this.#users, userId, () => this.#loadUser(userId));
  }

  async #loadUser(userId: bigint): Promise<UserFacts | null> {
    const rows = await this.store.db
      .select({ accountType: users.accountType })
      .from(users)
      .where(and(eq(users.id, userId), isNull(users.deletedAt)))
      .limit(1);
    return rows[0] ?? null;
  }

  relation(from: bigint, to: bigint): Promise<Relation> {
    return this.#cached(this.#relations, pairKey(from, to), () => this.#loadRelation(from, to));
  }

  async #loadRelation(from: bigint, to: bigint): Promise<Relation> {
    const [row] = await this.store.fixed<{ friend: boolean; denied: boolean }>(sql`select
      exists(select 1 from friend where user_id = ${from} and friend_id = ${to}) as friend,
      exists(select 1 from denylist where user_id = ${to} and denied_user_id = ${from}) as denied`);
    return { friend: row?.friend === true, denied: row?.denied === true };
  }

  /**
   * A live group's owner and members with roles; null when it does not exist or is dissolved.
   * `fresh` reads the database (REST authorisation) and refreshes the entry.
   */
  group(groupId: bigint, fresh = false): Promise<GroupFacts | null> {
    return this.#cached(this.#groups, groupId, () => this.#loadGroup(groupId), fresh);
  }

  async #loadGroup(groupId: bigint): Promise<GroupFacts | null> {
    const rows = await this.store.db
      .select({ ownerId: groups.ownerId, userId: groupMembers.userId, role: groupMembers.role })
      .from(groups)
      .leftJoin(groupMembers, eq(groupMembers.groupId, groups.id))
      .where(and(eq(groups.id, groupId), isNull(groups.dissolvedAt)));
    if (rows.length === 0) return null;
    const roles = new Map<bigint, GroupRole>();
    for (const r of rows) if (r.userId !== null && isGroupRole(r.role)) roles.set(r.userId, r.role);
    return { ownerId: rows[0]!.ownerId, roles, ids: [...roles.keys()] };
  }

  /** Friends of a user; misses of users connecting at once share one query (presence notices on connect). */
  friendsOf(userId: bigint): Promise<readonly bigint[]> {
    return this.#cached(this.#friends, userId, () => this.#friendLists.load(userId));
  }

  readonly #friendLists = new BatchLoader<bigint, readonly bigint[]>(
    async (userIds) => {
      // One array parameter, not `in ($1 … $n)`: a fixed text, prepared once per connection whatever the batch size
      // (every connect asks, for presence).
      const rows = await this.store.fixed<{ user_id: bigint | string; friend_id: bigint | string }>(
        sql`select ${friends.userId}, ${friends.friendId} from ${friends} where ${friends.userId} = any(${decimalArray(userIds.map(String))}::bigint[])`,
      );
      const out = new Map<bigint, bigint[]>(userIds.map((u) => [u, []]));
      for (const r of rows) out.get(BigInt(r.user_id))?.push(BigInt(r.friend_id));
      return out;
    },
    [],
    undefined,
    // Gathered on both stores, as a connect's device check (InboxReader.openDevice): presence after a connect asks.
    () => true,
  );
}
