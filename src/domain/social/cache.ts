/**
 * A bounded map whose entries expire after `ttlMs` (0: nothing is kept).
 * Eviction is oldest-inserted first: Map keeps insertion order, so it costs O(1).
 *
 * Refresh-ahead (`onDue`): an entry asked for in the last quarter of its life
 * is still answered, and its owner is told to read it again in the
 * background. A key in use is then never missing: entries loaded together
 * (a busy node's first seconds) expired together, and every message asking
 * in the next moment waited for a read (bench/FINDINGS.md 2026-11-27 afternoon).
 */
export class TtlCache<K, V> {
  readonly #entries = new Map<K, { readonly value: V; readonly at: number }>();
  /** Loads under way, by key: askers of a missing key share one read (`loading`, `track`). */
  readonly #loading = new Map<K, Promise<V>>();
  readonly #dueAfterMs: number;
  #onDue: ((key: K) => void) | undefined;

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
    private readonly now: () => number,
  ) {
    this.#dueAfterMs = ttlMs - ttlMs / 4;
  }

  /** Called (once per read) with a key asked for in the last quarter of its life: read it again, `track` the read. */
  onDue(refresh: (key: K) => void): void {
    this.#onDue = refresh;
  }

  /** The entry, or undefined on a miss (the value itself may be null/empty). */
  get(key: K): { readonly value: V } | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    const age = this.now() - e.at;
    if (age >= this.ttlMs) {
      this.#entries.delete(key);
      return undefined;
    }
    if (age >= this.#dueAfterMs && this.#onDue && !this.#loading.has(key)) this.#onDue(key);
    return e;
  }

  set(key: K, value: V): void {
    if (this.ttlMs <= 0) return;
    this.#entries.delete(key);
    this.#entries.set(key, { value, at: this.now() });
    if (this.#entries.size > this.max) this.#entries.delete(this.#entries.keys().next().value as K);
  }

  /** The read of `key` already under way, if any. */
  loading(key: K): Promise<V> | undefined {
    return this.#loading.get(key);
  }

  /**
   * Records `load` as the read of `key` until it settles: a key that is cold or just expired while messages
   * arrive is read once, not once per message (each asker's own read queued behind the others' was a storm that
   * stopped a loaded node, bench/FINDINGS.md 2026-11-27 midday).
   */
  track(key: K, load: Promise<V>): void {
    this.#loading.set(key, load);
    const done = () => {
      if (this.#loading.get(key) === load) this.#loading.delete(key);
    };
    load.then(done, done);
  }

  /** Drops the entry and any read of it under way (a later asker reads again). */
  delete(key: K): void {
    this.#entries.delete(key);
    this.#loading.delete(key);
  }

  clear(): void {
    this.#entries.clear();
    this.#loading.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
