/**
 * Throttles of the WebSocket edge, as plain state plus pure steps so they are
 * table-tested with a fake clock. Time is ms from `Services.now`.
 */

/** A token bucket: `tokens` available at time `at`. */
export interface Bucket {
  tokens: number;
  at: number;
}

export const fullBucket = (burst: number, now: number): Bucket => ({ tokens: burst, at: now });

/** Refills at `ratePerSec` up to `burst`, then takes one token; false when empty. */
export function takeToken(b: Bucket, now: number, ratePerSec: number, burst: number): boolean {
  const elapsed = now - b.at;
  if (elapsed > 0) {
    b.tokens = Math.min(burst, b.tokens + (elapsed * ratePerSec) / 1000);
    b.at = now;
  }
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

/**
 * Fixed-window counter per key (handshakes per device, per IP): at most
 * `limit` hits in each `windowMs` window. Memory is bounded by `prune`, which
 * the transport's sweep calls.
 */
export class WindowCounter {
  readonly #windows = new Map<string, { start: number; count: number }>();
  constructor(readonly limit: number, readonly windowMs: number) {}

  /** Counts one hit; false when the key is over its limit in the current window. */
  hit(key: string, now: number): boolean {
    const w = this.#windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      this.#windows.set(key, { start: now, count: 1 });
      return this.limit >= 1;
    }
    w.count++;
    return w.count <= this.limit;
  }

  /** Drops windows that have ended. */
  prune(now: number): void {
    for (const [key, w] of this.#windows) if (now - w.start >= this.windowMs) this.#windows.delete(key);
  }

  get size(): number {
    return this.#windows.size;
  }
}
