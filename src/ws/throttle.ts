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

/** Refills at `ratePerSec` up to `burst`, then takes `n` tokens (default one); false when fewer are left. */
export function takeToken(b: Bucket, now: number, ratePerSec: number, burst: number, n = 1): boolean {
  refill(b, now, ratePerSec, burst);
  if (b.tokens < n) return false;
  b.tokens -= n;
  return true;
}

function refill(b: Bucket, now: number, ratePerSec: number, burst: number): void {
  const elapsed = now - b.at;
  if (elapsed > 0) {
    b.tokens = Math.min(burst, b.tokens + (elapsed * ratePerSec) / 1000);
    b.at = now;
  }
}

/** Whether the bucket is full again at `now` (a fresh one would be the same). */
const refilled = (b: Bucket, now: number, ratePerSec: number, burst: number): boolean =>
  b.tokens + (Math.max(0, now - b.at) * ratePerSec) / 1000 >= burst;

export interface Rate {
  /** Tokens per second. */
  readonly rate: number;
  readonly burst: number;
}

export interface UserLimits {
  /** Business messages. */
  readonly messages: Rate;
  /** Bytes of business messages (a burst below the largest message would refuse it forever: kept at least that). */
  readonly bytes: Rate;
  /** Acknowledgements: exempt from the message bucket (spec §8), counted apart so they stay cheap but bounded. */
  readonly acks: Rate;
}

interface UserBuckets {
  messages: Bucket | undefined;
  bytes: Bucket | undefined;
  acks: Bucket | undefined;
}

/**
 * The per-user buckets of one node, shared by all the user's connections
 * here. They outlive the user's last connection until they are full again
 * (their refill horizon, burst / rate: 4 s for messages by default), so a
 * reconnect does not hand out a fresh burst; `sweep` then drops them, which
 * bounds memory by the users that sent in the last horizon. Each node counts
 * on its own (docs/websocket.md "Throttles").
 */
export class UserThrottles {
  readonly #users = new Map<bigint, UserBuckets>();
  constructor(readonly limits: UserLimits) {}

  /** One business message of `size` bytes; false when the user is over either rate. */
  message(userId: bigint, size: number, now: number): boolean {
    const u = this.#of(userId);
    const { messages, bytes } = this.limits;
    u.messages ??= fullBucket(messages.burst, now);
    u.bytes ??= fullBucket(bytes.burst, now);
    refill(u.bytes, now, bytes.rate, bytes.burst);
    // Both or neither: a message refused for its bytes does not spend a message token (and the reverse).
    if (u.bytes.tokens < size || !takeToken(u.messages, now, messages.rate, messages.burst)) return false;
    u.bytes.tokens -= size;
    return true;
  }

  /** One acknowledgement; false when the user's ack bucket is empty. */
  ack(userId: bigint, now: number): boolean {
    const u = this.#of(userId);
    const { acks } = this.limits;
    u.acks ??= fullBucket(acks.burst, now);
    return takeToken(u.acks, now, acks.rate, acks.burst);
  }

  /** Drops users whose buckets are all full again (the transport's sweep calls this). */
  sweep(now: number): void {
    const { messages, bytes, acks } = this.limits;
    const full = (b: Bucket | undefined, r: Rate) => b === undefined || refilled(b, now, r.rate, r.burst);
    for (const [userId, u] of this.#users) {
      if (full(u.messages, messages) && full(u.bytes, bytes) && full(u.acks, acks)) this.#users.delete(userId);
    }
  }

  /** Users with buckets held (tests, metrics). */
  get size(): number {
    return this.#users.size;
  }

  #of(userId: bigint): UserBuckets {
    let u = this.#users.get(userId);
    if (!u) this.#users.set(userId, (u = { messages: undefined, bytes: undefined, acks: undefined }));
    return u;
  }
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
