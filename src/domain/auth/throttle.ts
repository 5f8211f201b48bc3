/**
 * Fixed-window counter per key (login/signup/refresh per IP). A key's count
 * resets once its window has passed; at most once per window the entries of
 * expired windows are dropped, so memory stays bounded by the keys seen in
 * one window. `now` is injected: tests never sleep.
 */
export class WindowLimiter {
  #counts = new Map<string, { start: number; n: number }>();
  #lastSweep = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
    private readonly off = false,
  ) {}

  /** Counts one call; false when the key is over its limit in this window. */
  take(key: string): boolean {
    if (this.off) return true;
    const t = this.now();
    if (t - this.#lastSweep >= this.windowMs) {
      for (const [k, v] of this.#counts) if (t - v.start >= this.windowMs) this.#counts.delete(k);
      this.#lastSweep = t;
    }
    const entry = this.#counts.get(key);
    if (!entry || t - entry.start >= this.windowMs) {
      this.#counts.set(key, { start: t, n: 1 });
      return true;
    }
    entry.n++;
    return entry.n <= this.limit;
  }
}
