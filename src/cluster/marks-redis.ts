/**
 * Delivery marks shared through Redis (docs/cluster.md): between an ack and
 * its database commit, every node's offline pull must already exclude it.
 *   <prefix>marks:<user>:<device>  set of mark tokens (server id, or <conv>:<seq>), TTL renewed on each add
 * Adds of one event-loop tick leave in one pipeline (SADD + PEXPIRE per
 * device); a committed batch is removed with SREM. A set left behind by a node
 * that died before committing is written to the database by the next node
 * that reads it (`repairs`), then removed.
 */
import type Redis from "ioredis";
import { markOfToken, markToken, type MarkShare } from "../delivery/marks.ts";
import type { MarkRow } from "../delivery/writer.ts";

/** Long enough for any commit; a leftover of a dead node is repaired by the next pull first. */
const TTL_MS = 24 * 3_600_000;

type Waiter = { resolve: () => void; reject: (e: unknown) => void };

export class RedisMarkShare implements MarkShare {
  /** Marks read from Redis may belong to a dead node: the ledger writes them again (idempotent). */
  readonly repairs = true;
  #adds = new Map<string, string[]>();
  #drops = new Map<string, string[]>();
  #waiters: Waiter[] = [];
  #scheduled = false;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  #key(userId: bigint, deviceId: string): string {
    return `${this.prefix}marks:${userId}:${deviceId}`;
  }

  add(marks: readonly MarkRow[]): Promise<void> {
    for (const m of marks) push(this.#adds, this.#key(m.userId, m.deviceId), markToken(m));
    return new Promise<void>((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
      this.#schedule();
    });
  }

  drop(marks: readonly MarkRow[]): void {
    for (const m of marks) push(this.#drops, this.#key(m.userId, m.deviceId), markToken(m));
    this.#schedule();
  }

  async of(userId: bigint, deviceId: string): Promise<readonly MarkRow[]> {
    const tokens = await this.redis.smembers(this.#key(userId, deviceId));
    return tokens.map((t) => markOfToken(userId, deviceId, t));
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => void this.#send());
  }

  async #send(): Promise<void> {
    this.#scheduled = false;
    const [adds, drops, waiters] = [this.#adds, this.#drops, this.#waiters];
    this.#adds = new Map();
    this.#drops = new Map();
    this.#waiters = [];
    const p = this.redis.pipeline();
    for (const [key, ids] of adds) {
      p.sadd(key, ...ids);
      p.pexpire(key, TTL_MS);
    }
    for (const [key, ids] of drops) p.srem(key, ...ids);
    try {
      const results = await p.exec();
      const failed = results?.find(([err]) => err);
      if (failed) throw failed[0];
      for (const w of waiters) w.resolve();
    } catch (err) {
      for (const w of waiters) w.reject(err);
    }
  }
}

function push(map: Map<string, string[]>, key: string, id: string): void {
  const list = map.get(key);
  if (list) list.push(id);
  else map.set(key, [id]);
}
