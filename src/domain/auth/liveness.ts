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

export interface LivenessSource {
  /** Which of `userIds` are accounts that exist and are not deleted. */
  liveAmong(userIds: readonly bigint[]): Promise<ReadonlySet<bigint>>;
}

interface Waiter {
  readonly resolve: (live: boolean) => void;
  readonly reject: (err: unknown) => void;
}

/** Ids per query: keeps one statement's parameter list modest in a reconnect storm. */
const BATCH_MAX = 1000;
const LIVE = Promise.resolve(true);

export class AccountLiveness {
  /** Two generations of accounts found live: an entry lives between one and two `ttlMs`. */
  #current = new Set<bigint>();
  #previous = new Set<bigint>();
  #rotatedAt: number;
  /** Ids waiting for the next query; each with every handshake that asked. */
  #next = new Map<bigint, Waiter[]>();
  #busy = false;
  /** Bumped by `forget`: a query that raced with a deletion does not refill the memory. */
  #epoch = 0;

  constructor(
    private readonly source: LivenessSource,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {
    this.#rotatedAt = now();
  }

  isActive(userId: bigint): Promise<boolean> {
    this.#rotate();
    if (this.#current.has(userId) || this.#previous.has(userId)) return LIVE;
    return new Promise<boolean>((resolve, reject) => {
      const waiters = this.#next.get(userId);
      if (waiters) waiters.push({ resolve, reject });
      else this.#next.set(userId, [{ resolve, reject }]);
      if (!this.#busy) void this.#drain();
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

  async #drain(): Promise<void> {
    this.#busy = true;
    try {
      while (this.#next.size) {
        const batch = this.#take();
        const epoch = this.#epoch;
        let live: ReadonlySet<bigint>;
        try {
          live = await this.source.liveAmong([...batch.keys()]);
        } catch (err) {
          for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
          continue;
        }
        this.#rotate();
        for (const [id, waiters] of batch) {
          const ok = live.has(id);
          if (ok && epoch === this.#epoch) this.#current.add(id);
          for (const w of waiters) w.resolve(ok);
        }
      }
    } finally {
      this.#busy = false;
    }
  }

  /** Up to BATCH_MAX waiting ids, oldest first. */
  #take(): Map<bigint, Waiter[]> {
    if (this.#next.size <= BATCH_MAX) {
      const all = this.#next;
      this.#next = new Map();
      return all;
    }
    const batch = new Map<bigint, Waiter[]>();
    for (const [id, waiters] of this.#next) {
      batch.set(id, waiters);
      this.#next.delete(id);
      if (batch.size === BATCH_MAX) break;
    }
    return batch;
  }
}
