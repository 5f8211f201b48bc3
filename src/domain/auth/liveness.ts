/**
 * The account check of every WebSocket handshake (docs/websocket.md, "Account
 * check"): does the account behind a valid token still exist? Answers from a
 * short-lived per-node memory of accounts found live; the others are read in
 * batches, one query in flight, the handshakes arriving meanwhile forming the
 * next batch (a lone handshake waits for nothing but its own query).
 *
 * Only "live" is remembered, never "gone": a deleted account is refused at
 * once unless it connected on this node within the last `ttlMs`…`2·ttlMs`
 * and its deletion ran on another node (deletions on this node call `forget`).
 */

import { BatchLoader } from "../../db/batch-load.ts";

export interface LivenessSource {
  /** Which of `userIds` are accounts that exist and are not deleted. */
  liveAmong(userIds: readonly bigint[]): Promise<ReadonlySet<bigint>>;
}

/** Ids per query: keeps one statement's parameter list modest in a reconnect storm. */
const BATCH_MAX = 1000;
const LIVE = Promise.resolve(true);

export class AccountLiveness {
  /** Two generations of accounts found live: an entry lives between one and two `ttlMs`. */
  #current = new Set<bigint>();
  #previous = new Set<bigint>();
  #rotatedAt: number;
  readonly #loader: BatchLoader<bigint, boolean>;
  /** Bumped by `forget`: a query that raced with a deletion does not refill the memory. */
  #epoch = 0;

  constructor(
    source: LivenessSource,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {
    this.#rotatedAt = now();
    this.#loader = new BatchLoader(
      async (ids) => {
        const live = await source.liveAmong(ids);
        return new Map(ids.map((id) => [id, live.has(id)]));
      },
      false,
      BATCH_MAX,
    );
  }

  isActive(userId: bigint): Promise<boolean> {
    this.#rotate();
    if (this.#current.has(userId) || this.#previous.has(userId)) return LIVE;
    const epoch = this.#epoch;
    return this.#loader.load(userId).then((ok) => {
      this.#rotate();
      if (ok && epoch === this.#epoch) this.#current.add(userId);
      return ok;
    });
  }

  /** The account was deleted (or must be read again): the next handshake asks the database. */
  forget(userId: bigint): void {
    this.#epoch++;
    this.#current.delete(userId);
    this.#previous.delete(userId);
  }

  /** Accounts remembered as live (tests, metrics). */
  get size(): number {
    return this.#current.size + this.#previous.size;
  }

  #rotate(): void {
    const t = this.now();
    if (t - this.#rotatedAt < this.ttlMs) return;
    // Two windows gone by: nothing is young enough to keep.
    this.#previous = t - this.#rotatedAt < 2 * this.ttlMs ? this.#current : new Set();
    this.#current = new Set();
    this.#rotatedAt = t;
  }
}
