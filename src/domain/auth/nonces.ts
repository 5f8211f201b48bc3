/**
 * Replay memory for signed requests: a nonce is claimed once until its
 * request's timestamp leaves the acceptance window. Bounded: at `cap` live
 * entries a claim is refused ("full") rather than forgetting a live nonce,
 * which would let its request be replayed. `now` is injected: tests never sleep.
 */
export type Claim = "fresh" | "replayed" | "full";

export class NonceMemory {
  // nonce → expiry ms; swept when full and at least once per window.
  #live = new Map<string, number>();
  #lastSweep = 0;

  constructor(
    private readonly cap: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.#live.size;
  }

  claim(key: string, expiresAt: number): Claim {
    const t = this.now();
    // A full sweep is O(size): at most once a second while full, else once per window.
    const since = t - this.#lastSweep;
    if (since >= this.windowMs || (this.#live.size >= this.cap && since >= 1000)) this.#sweep(t);
    const known = this.#live.get(key);
    if (known !== undefined && known > t) return "replayed";
    if (this.#live.size >= this.cap) return "full";
    this.#live.set(key, expiresAt);
    return "fresh";
  }

  #sweep(t: number): void {
    for (const [k, exp] of this.#live) if (exp <= t) this.#live.delete(k);
    this.#lastSweep = t;
  }
}
