import type { Store } from "./store.ts";

/**
 * Loads by key in batches, one query in flight (or `depth`): keys asked for
 * while the queries run form the next one (a lone caller waits only for its
 * own query; a reconnect storm costs a few statements, not one per
 * connection). Equal keys asked for at once share one slot.
 *
 * With `gather` (the embedded store, `inThread`, and reads off a handshake's
 * path on either store), the first query starts on the
 * next macrotask, so keys asked for in the same turn of the event loop share
 * it: PGlite runs a query inside the caller's thread, nothing arrives while it
 * runs, and without the wait every handshake of a burst made its own statements
 * (5,000 connects: 5,000 statements of each kind, not ~75).
 */
export class BatchLoader<K, V> {
  /** Keys waiting for the next query, each with every caller that asked. */
  #next = new Map<K, Waiter<V>[]>();
  /** Queries running. */
  #inflight = 0;
  /** A gathered first query is due on the next macrotask. */
  #scheduled = false;
  /** Queries made so far (tests, metrics). */
  queries = 0;

  constructor(
    /** Answers every key it is given (a key it leaves out gets `missing`). */
    private readonly loadMany: (keys: K[]) => Promise<ReadonlyMap<K, V>>,
    private readonly missing: V,
    private readonly maxBatch = 1000,
    /** Start the first query on the next macrotask (read at the first load). */
    private readonly gather: () => boolean = () => false,
    /**
     * Queries in flight at most. One keeps a storm to few statements; a loader
     * on a handshake's path takes a few, so a key asked for while a query runs
     * need not wait for it to end first (bench/FINDINGS.md, issue 19).
     */
    private readonly depth = 1,
  ) {}

  load(key: K): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      const waiters = this.#next.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.#next.set(key, [{ resolve, reject }]);
      if (this.#scheduled || this.#inflight >= this.depth) return; // a query that ends starts the next
      if (this.#inflight === 0 && this.gather()) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#pump();
        });
      } else this.#pump();
    });
  }

  /** Starts queries of the waiting keys while there is room in flight. */
  #pump(): void {
    while (this.#next.size && this.#inflight < this.depth) {
      const batch = this.#take();
      this.queries++;
      this.#inflight++;
      let found: Promise<ReadonlyMap<K, V>>;
      try {
        found = this.loadMany([...batch.keys()]);
      } catch (err) {
        found = Promise.reject(err);
      }
      const fail = (err: unknown) => {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(err); // a no-op for those answered
      };
      found.then(
        (values) => {
          try {
            for (const [key, waiters] of batch) {
              const v = values.has(key) ? values.get(key)! : this.missing;
              for (const w of waiters) w.resolve(v);
            }
          } catch (err) {
            fail(err); // an answer that was no map: nobody is left waiting, and the slot frees
          }
          this.#done();
        },
        (err: unknown) => {
          fail(err);
          this.#done();
        },
      );
    }
  }

  #done(): void {
    this.#inflight--;
    this.#pump();
  }

  /** Up to maxBatch waiting keys, oldest first. */
  #take(): Map<K, Waiter<V>[]> {
    if (this.#next.size <= this.maxBatch) {
      const all = this.#next;
      this.#next = new Map();
      return all;
    }
    const batch = new Map<K, Waiter<V>[]>();
    for (const [key, waiters] of this.#next) {
      batch.set(key, waiters);
      this.#next.delete(key);
      if (batch.size === this.maxBatch) break;
    }
    return batch;
  }
}

interface Waiter<V> {
  resolve(v: V): void;
  reject(e: unknown): void;
}

/** A store whose queries run in the caller's thread (PGlite): its loaders gather a turn's keys first. */
export const inThread = (store: Store) => () => store.kind === "pglite";
