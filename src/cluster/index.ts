/**
 * The cluster side of one node: its node id, bus and presence registry, the
 * timers that keep the id lease and presence alive, and the shutdown steps.
 * No REDIS_URL: everything in process (one node). REDIS_URL: Redis Streams
 * bus, Redis presence and, without IBIS_NODE_ID, a node id leased in Redis.
 */
import type Redis from "ioredis";
import { hostname } from "node:os";
import type { Config } from "../config/index.ts";
import type { Store } from "../db/store.ts";
import type { Logger } from "../log.ts";
import type { Bus, BusEntry } from "../bus/bus.ts";
import { MemoryBusHub } from "../bus/memory.ts";
import { RedisStreamsBus } from "../bus/redis-streams.ts";
import type { Lifecycle } from "./lifecycle.ts";
import { leaseNodeId, LEASE_TTL_MS, type NodeLease } from "./node-lease.ts";
import { MemoryPresenceHub, type Presence } from "./presence.ts";
import { RedisPresence } from "./presence-redis.ts";
import { MemoryMarkShare, type MarkShare } from "../delivery/marks.ts";
import { RedisMarkShare } from "./marks-redis.ts";
import { openRedis } from "./redis.ts";
import { leaseNodeIdFromRedis } from "./redis-node-lease.ts";

export interface Cluster extends Lifecycle {
  readonly nodeId: number;
  readonly bus: Bus;
  readonly presence: Presence;
  /** Acknowledged, not yet committed delivery marks shared by every node (Redis), or this process only. */
  readonly marks: MarkShare;
  /** The shared command connection when REDIS_URL is set. */
  readonly redis: Redis | undefined;
  /** Shutdown step 1: readiness fails and new handshakes are refused. */
  startDraining(): void;
  /** Shutdown step 3 (after the sockets are closed): flush the bus, remove this node's presence. */
  drain(): Promise<void>;
  /** Last step: stop timers, close the bus, release the node id, close Redis. */
  close(): Promise<void>;
  /**
   * Runs `listener` each time Redis answers again after the connection was
   * lost (this node's presence is re-registered first, without waiting for
   * the next heartbeat). Never called without REDIS_URL.
   */
  onRecovered(listener: () => void): void;
  /**
   * Sends `entry` to every other live node. Sent at once to the nodes seen
   * alive so far (so it keeps its order with what this node sends next), then
   * to any node a fresh `presence.nodes()` adds. Never throws.
   */
  broadcast(entry: BusEntry): void;
}

export async function openCluster(config: Config, store: Store, log: Logger, now: () => number): Promise<Cluster> {
  const holder = `${hostname()}:${process.pid}:${crypto.randomUUID()}`;
  const redis = config.redisUrl ? await openRedis(config.redisUrl, log) : undefined;
  let lease: NodeLease | undefined;
  let nodeId = config.nodeId;
  try {
    if (nodeId === undefined) {
      lease = redis ? await leaseNodeIdFromRedis(redis, config.redisPrefix, holder) : await leaseNodeId(store, holder, now);
      nodeId = lease.nodeId;
    }
  } catch (e) {
    redis?.disconnect();
    throw e;
  }
  const id = nodeId;

  const bus: Bus = redis
    ? new RedisStreamsBus({ redis, nodeId: id, prefix: config.redisPrefix, maxLen: config.busMaxLen, bufferMax: config.busBuffer, log })
    : new MemoryBusHub().bus(id, log);
  const presence: Presence = redis
    ? new RedisPresence({ redis, nodeId: id, prefix: config.redisPrefix, ttlMs: config.presenceTtlMs })
    : { ...new MemoryPresenceHub(config.presenceTtlMs, now).node(id), alone: true };
  await presence.heartbeat();
  const marks: MarkShare = redis ? new RedisMarkShare(redis, config.redisPrefix) : new MemoryMarkShare();

  // Other live nodes as last seen (broadcast), refreshed with every heartbeat.
  let others: readonly number[] = [];
  const refreshNodes = async (): Promise<number[]> => {
    const fresh = (await presence.nodes()).filter((n) => n !== id);
    others = fresh;
    return fresh;
  };
  await refreshNodes();
  const beat = () => {
    presence
      .heartbeat()
      .then(refreshNodes)
      .catch((e: unknown) => log.warn("presence heartbeat failed", { err: e as Error }));
  };

  const timers = [setInterval(beat, Math.floor(config.presenceTtlMs / 3))];
  if (lease) {
    const l = lease;
    timers.push(
      setInterval(() => {
        l.renew().catch((e: unknown) => log.error("node id lease renewal failed", { node_id: id, err: e as Error }));
      }, LEASE_TTL_MS / 3),
    );
  }
  for (const t of timers) t.unref();

  const recovered: (() => void)[] = [];
  if (redis) {
    let lost = false;
    redis.on("close", () => (lost = true));
    redis.on("ready", () => {
      if (!lost) return;
      lost = false;
      // A Redis that restarted empty lost our node-id lease: take it back now, not at the next renewal
      // (until then a starting node could lease the same id; src/delivery/writer.ts refuses what collides).
      lease?.renew().catch((e: unknown) => log.error("node id lease renewal failed", { node_id: id, err: e as Error }));
      beat();
      for (const f of recovered) f();
    });
  }

  let draining = false;
  let closed = false;
  return {
    nodeId: id,
    bus,
    presence,
    marks,
    redis,
    get draining() {
      return draining;
    },
    notReady() {
      if (draining) return "draining";
      if (redis && !bus.ready()) return "redis unreachable";
      return undefined;
    },
    startDraining() {
      draining = true;
    },
    onRecovered(listener) {
      recovered.push(listener);
    },
    broadcast(entry) {
      const known = others;
      for (const n of known) bus.send(n, entry);
      if (!redis) return; // in process: no other node
      refreshNodes().then(
        (fresh) => {
          for (const n of fresh) if (!known.includes(n)) bus.send(n, entry);
        },
        (e: unknown) => log.warn("live nodes unknown, broadcast reached the last known ones", { err: e as Error }),
      );
    },
    async drain() {
      await bus.flush();
      await presence.clear().catch((e: unknown) => log.warn("presence not cleared", { err: e as Error }));
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const t of timers) clearInterval(t);
      await bus.close();
      await lease?.release().catch(() => {});
      if (redis) await redis.quit().catch(() => redis.disconnect());
    },
  };
}
