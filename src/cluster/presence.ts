/**
 * The presence registry: which node holds each connected (user, device).
 * The delivery engine asks it where recipients are (one batched lookup per
 * fan-out), then hands local recipients to its SessionRegistry and sends one
 * bus entry per remote node. Entries of a node that stops renewing them (its
 * heartbeat) vanish after the TTL, so a dead node's devices are not routed to.
 * Implementations: MemoryPresence below (one process), RedisPresence
 * (presence-redis.ts, REDIS_URL).
 */
export interface PresenceEntry {
  readonly userId: bigint;
  readonly deviceId: string;
  readonly nodeId: number;
}

export interface Presence {
  readonly nodeId: number;
  /**
   * No other node can exist (the in-process registry of a node without
   * Redis): delivery skips every cross-node step instead of asking.
   */
  readonly alone?: boolean;
  /**
   * Records (user, device) as connected on this node. Returns the node that
   * held it before when that is another live node (a takeover across nodes:
   * send it a bus `kick`), else undefined.
   */
  add(userId: bigint, deviceId: string): Promise<number | undefined>;
  /** Forgets (user, device) if it is still recorded on this node; a device that moved on is left alone. */
  remove(userId: bigint, deviceId: string): Promise<void>;
  /** Where the users' devices are (live nodes only), in one round trip for the whole list. Users with none are absent. */
  lookup(userIds: readonly bigint[]): Promise<Map<bigint, PresenceEntry[]>>;
  /** The live nodes (this one included), in one round trip. */
  nodes(): Promise<number[]>;
  /** Renews this node's liveness and its entries: once before the first `add`, then every TTL/3. */
  heartbeat(): Promise<void>;
  /** Removes every entry of this node and its liveness (graceful shutdown). */
  clear(): Promise<void>;
}

/**
 * Presence for nodes living in one process (a single node, or several in
 * tests). A node is live until `ttlMs` after its last heartbeat on the hub's
 * clock; `add` counts as one.
 */
export class MemoryPresenceHub {
  readonly #devices = new Map<bigint, Map<string, { node: number; epoch: number }>>();
  readonly #alive = new Map<number, { epoch: number; until: number }>();
  #epochs = 0;

  constructor(
    readonly ttlMs: number,
    readonly now: () => number = Date.now,
  ) {}

  node(nodeId: number): Presence {
    const epoch = ++this.#epochs;
    const hub = this;
    const beat = () => hub.#alive.set(nodeId, { epoch, until: hub.now() + hub.ttlMs });
    beat();
    return {
      nodeId,
      async add(userId, deviceId) {
        beat();
        let devices = hub.#devices.get(userId);
        if (!devices) hub.#devices.set(userId, (devices = new Map()));
        const before = devices.get(deviceId);
        devices.set(deviceId, { node: nodeId, epoch });
        return before && before.node !== nodeId && hub.#live(before.node, before.epoch) ? before.node : undefined;
      },
      async remove(userId, deviceId) {
        const devices = hub.#devices.get(userId);
        const at = devices?.get(deviceId);
        if (at?.node === nodeId && at.epoch === epoch) {
          devices!.delete(deviceId);
          if (devices!.size === 0) hub.#devices.delete(userId);
        }
      },
      async lookup(userIds) {
        const out = new Map<bigint, PresenceEntry[]>();
        for (const userId of userIds) {
          const devices = hub.#devices.get(userId);
          if (!devices || out.has(userId)) continue;
          const list: PresenceEntry[] = [];
          for (const [deviceId, at] of devices) if (hub.#live(at.node, at.epoch)) list.push({ userId, deviceId, nodeId: at.node });
          if (list.length) out.set(userId, list);
        }
        return out;
      },
      async nodes() {
        return [...hub.#alive.keys()].filter((n) => hub.#live(n, hub.#alive.get(n)!.epoch));
      },
      async heartbeat() {
        if (hub.#alive.get(nodeId)?.epoch === epoch) beat();
      },
      async clear() {
        for (const [userId, devices] of hub.#devices) {
          for (const [deviceId, at] of devices) if (at.node === nodeId && at.epoch === epoch) devices.delete(deviceId);
          if (devices.size === 0) hub.#devices.delete(userId);
        }
        if (hub.#alive.get(nodeId)?.epoch === epoch) hub.#alive.delete(nodeId);
      },
    };
  }

  #live(node: number, epoch: number): boolean {
    const a = this.#alive.get(node);
    return a !== undefined && a.epoch === epoch && a.until > this.now();
  }
}
