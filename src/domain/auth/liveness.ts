/**
 * The check behind every token (docs/auth.md "How tokens are verified",
 * docs/websocket.md "Account check"): does the account still exist, is it not
 * suspended, and is the token of its device session's current generation (not
 * signed out, not revoked)? Answers from a short-lived per-node memory of
 * sessions found live; the others are read in batches, a few queries in
 * flight on PostgreSQL (one on PGlite), the checks arriving meanwhile forming
 * the next batch (a lone check waits for nothing but its own query).
 *
 * Only "live, generation g" is remembered, never "gone" or "suspended". Every
 * revocation drops the user's entries at once on the node that made it
 * (`forget`) and on the others through the bus `invalidate {kind: "user"}`
 * entry; the TTL only bounds what a node cut off from the bus could miss.
 *
 * An entry used in its second window is answered from memory, as before, and
 * read again in the background (one statement at a time, the uses arriving
 * meanwhile together): a session in use stays remembered, so its handshakes
 * never wait for the database, and no answer comes from a read older than two
 * TTLs.
 */

import { BatchLoader } from "../../db/batch-load.ts";

/** What the database says of one (user, device): the session generation while the account may sign in. */
export type SessionFact = number | "gone" | "suspended";

/** The answer for one token. */
export type SessionVerdict = "ok" | "gone" | "suspended" | "revoked";

/** Title and content of a refused token, the same on REST and at the WebSocket handshake. */
export const VERDICT_REFUSAL: Record<Exclude<SessionVerdict, "ok">, readonly [title: string, content: string]> = {
  gone: ["unauthorized", "account does not exist"],
  suspended: ["account_suspended", "this account is suspended"],
  revoked: ["unauthorized", "token revoked: sign in again"],
};

export interface SessionKey {
  readonly userId: bigint;
  readonly deviceId: string;
}

export interface LivenessSource {
  /** The fact of every key, in the order given (a missing account is "gone"). */
  sessionsAmong(keys: readonly SessionKey[]): Promise<readonly SessionFact[]>;
}

/** Keys per query: keeps one statement's parameter list modest in a reconnect storm. */
const BATCH_MAX = 1000;
const OK: Promise<SessionVerdict> = Promise.resolve("ok");
const REVOKED: Promise<SessionVerdict> = Promise.resolve("revoked");

/** BatchLoader key: the user id (digits) first, so the first "/" splits it from the device id. */
const keyOf = (userId: bigint, deviceId: string) => `${userId}/${deviceId}`;
function parseKey(key: string): SessionKey {
  const cut = key.indexOf("/");
  return { userId: BigInt(key.slice(0, cut)), deviceId: key.slice(cut + 1) };
}

type Generation = Map<bigint, Map<string, number>>;

export class AccountLiveness {
  /** Two generations of sessions found live (user → device → gen): an entry lives between one and two `ttlMs`. */
  #current: Generation = new Map();
  #previous: Generation = new Map();
  #rotatedAt: number;
  readonly #loader: BatchLoader<string, SessionFact>;
  /** Bumped by `forget`: a query that raced with a revocation does not refill the memory. */
  #epoch = 0;
  readonly #source: LivenessSource;
  // Background reads of entries used in their second window, one statement at a time and no promise per session
  // (through a BatchLoader each read cost ~1 KB of waiters, promises and callbacks: 5,000 of them in a storm).
  /** Sessions waiting for the next statement, each with its key in `#refreshing`. */
  #toRefresh: (SessionKey & { readonly key: string })[] = [];
  /** Keys waiting or being read: one read each at a time. */
  readonly #refreshing = new Set<string>();
  #refreshRunning = false;

  constructor(
    source: LivenessSource,
    private readonly ttlMs: number,
    private readonly now: () => number,
    /** The store runs queries in this thread (PGlite): gather a turn's handshakes into one query (BatchLoader). */
    gather?: () => boolean,
    /** Queries in flight at most (BatchLoader `depth`). */
    depth = 1,
  ) {
    this.#rotatedAt = now();
    const loadMany = async (keys: string[]) => {
      const facts = await source.sessionsAmong(keys.map(parseKey));
      return new Map(keys.map((k, i) => [k, facts[i]!]));
    };
    this.#loader = new BatchLoader(loadMany, "gone", BATCH_MAX, gather, depth);
    this.#source = source;
  }

  /** The verdict on a token of `userId` issued for device session `deviceId` at generation `gen`. */
  check(userId: bigint, deviceId: string, gen: number): Promise<SessionVerdict> {
    const known = this.known(userId, deviceId, gen);
    if (known !== undefined) return known === "ok" ? OK : REVOKED;
    const epoch = this.#epoch;
    return this.#loader.load(keyOf(userId, deviceId)).then((fact) => {
      if (typeof fact !== "number") return fact;
      this.#rotate();
      if (epoch === this.#epoch) this.#remember(userId, deviceId, fact);
      return fact === gen ? "ok" : "revoked";
    });
  }

  /**
   * The verdict from memory alone, undefined when the database must be asked
   * (`check`): a handshake answered from memory upgrades in the same turn. An
   * entry answered in its second window is read again in the background.
   */
  known(userId: bigint, deviceId: string, gen: number): "ok" | "revoked" | undefined {
    this.#rotate();
    let known = this.#current.get(userId)?.get(deviceId);
    if (known === undefined) {
      known = this.#previous.get(userId)?.get(deviceId);
      if (known !== undefined) this.#refresh(userId, deviceId);
    }
    if (known === gen) return "ok";
    // An older token is revoked; a newer one means this memory is behind (a revocation's invalidation still on its way).
    if (known !== undefined && gen < known) return "revoked";
    return undefined;
  }

  /** The account changed (deleted, suspended, a session revoked): its next check asks the database. */
  forget(userId: bigint): void {
    this.#epoch++;
    this.#current.delete(userId);
    this.#previous.delete(userId);
  }

  /** Sessions remembered (tests, metrics). */
  get size(): number {
    let n = 0;
    for (const g of [this.#current, this.#previous]) for (const d of g.values()) n += d.size;
    return n;
  }

  /** The generation remembered for a session, the younger memory first. */
  #generation(userId: bigint, deviceId: string): number | undefined {
    return this.#current.get(userId)?.get(deviceId) ?? this.#previous.get(userId)?.get(deviceId);
  }

  /**
   * Reads an entry again off the caller's path; the answer goes to the younger memory. Found gone or suspended,
   * the entry is dropped (the next check asks and refuses); a revocation meanwhile keeps the answer out; a failed
   * read leaves the entry to age out as before.
   */
  #refresh(userId: bigint, deviceId: string): void {
    const key = keyOf(userId, deviceId);
    if (this.#refreshing.has(key)) return;
    this.#refreshing.add(key);
    this.#toRefresh.push({ userId, deviceId, key });
    if (this.#refreshRunning) return;
    this.#refreshRunning = true;
    setImmediate(() => void this.#refreshAll()); // the uses of this turn share the first statement
  }

  async #refreshAll(): Promise<void> {
    try {
      while (this.#toRefresh.length) {
        const keys = this.#toRefresh.splice(0, BATCH_MAX);
        const epoch = this.#epoch;
        let facts: readonly SessionFact[] | undefined;
        try {
          facts = await this.#source.sessionsAmong(keys);
        } catch {
          // The store failed: the entries age out as they would have without the read.
        }
        if (facts && epoch === this.#epoch) {
          this.#rotate();
          for (let i = 0; i < keys.length; i++) {
            const { userId, deviceId } = keys[i]!;
            const fact = facts[i];
            if (typeof fact === "number") this.#remember(userId, deviceId, fact);
            else this.#drop(userId, deviceId);
          }
        }
        for (const k of keys) this.#refreshing.delete(k.key);
      }
    } finally {
      this.#refreshRunning = false;
    }
  }

  #drop(userId: bigint, deviceId: string): void {
    for (const g of [this.#current, this.#previous]) {
      const devices = g.get(userId);
      if (devices?.delete(deviceId) && devices.size === 0) g.delete(userId);
    }
  }

  #remember(userId: bigint, deviceId: string, gen: number): void {
    // Generations only grow (a revocation bumps one; no row goes back): of queries in flight together, one that
    // read before a revocation and ended after a later one does not put the older generation back.
    const known = this.#generation(userId, deviceId);
    if (known !== undefined && known > gen) return;
    let devices = this.#current.get(userId);
    if (!devices) this.#current.set(userId, (devices = new Map()));
    devices.set(deviceId, gen);
  }

  #rotate(): void {
    const t = this.now();
    if (t - this.#rotatedAt < this.ttlMs) return;
    // Two windows gone by: nothing is young enough to keep.
    this.#previous = t - this.#rotatedAt < 2 * this.ttlMs ? this.#current : new Map();
    this.#current = new Map();
    this.#rotatedAt = t;
  }
}
