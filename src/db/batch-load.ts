import type { Store } from "./store.ts";

/**
 * Loads by key in batches, one query in flight: keys asked for while a query
 * runs form the next one (a lone caller waits only for its own query; a
 * reconnect storm costs a few statements, not one per connection). Equal keys
 * asked for at once share one slot.
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
  #next = new Map<K, { resolve: (v: V) => void; reject: (e: unknown) => void }[]>();
  #busy = false;
  /** Queries made so far (tests, metrics). */
  queries = 0;

  constructor(
    /** Answers every key it is given (a key it leaves out gets `missing`). */
    private readonly loadMany: (keys: K[]) => Promise<ReadonlyMap<K, V>>,
    private readonly missing: V,
    private readonly maxBatch = 1000,
    /** Start the first query on the next macrotask (read at the first load). */
    private readonly gather: () => boolean = () => false,
  ) {}

  load(key: K): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      const waiters = this.#next.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.#next.set(key, [{ resolve, reject }]);
      if (this.#busy) return;
      this.#busy = true;
      if (this.gather()) setImmediate(() => void this.#drain());
      else void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#next.size) {
        const batch = this.#take();
        this.queries++;
        try {
          const found = await this.loadMany([...batch.keys()]);
          for (const [key, waiters] of batch) {
            const v = found.has(key) ? found.get(key)! : this.missing;
            for (const w of waiters) w.resolve(v);
          }
        } catch (err) {
          for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
        }
      }
    } finally {
      this.#busy = false;
    }
  }

  /** Up to maxBatch waiting keys, oldest first. */
  #take(): Map<K, { resolve: (v: V) => void; reject: (e: unknown) => void }[]> {
    if (this.#next.size <= this.maxBatch) {
      const all = this.#next;
      this.#next = new Map();
      return all;
    }
    const batch = new Map<K, { resolve: (v: V) => void; reject: (e: unknown) => void }[]>();
    for (const [key, waiters] of this.#next) {
      batch.set(key, waiters);
      this.#next.delete(key);
      if (batch.size === this.maxBatch) break;
    }
    return batch;
  }
}

/** A store whose queries run in the caller's thread (PGlite): its loaders gather a turn's keys first. */
export const inThread = (store: Store) => () => store.kind === "pglite";
