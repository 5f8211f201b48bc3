/**
 * A bounded map whose entries expire after `ttlMs` (0: nothing is kept).
 * Eviction is oldest-inserted first: Map keeps insertion order, so it costs O(1).
 */
export class TtlCache<K, V> {
  readonly #entries = new Map<K, { readonly value: V; readonly at: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
    private readonly now: () => number,
  ) {}

  /** The entry, or undefined on a miss (the value itself may be null/empty). */
  get(key: K): { readonly value: V } | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    if (this.now() - e.at >= this.ttlMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return e;
  }

  set(key: K, value: V): void {
    if (this.ttlMs <= 0) return;
    this.#entries.delete(key);
    this.#entries.set(key, { value, at: this.now() });
    if (this.#entries.size > this.max) this.#entries.delete(this.#entries.keys().next().value as K);
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
