/**
 * Presence in Redis. Three kinds of keys (docs/cluster.md):
 *   <prefix>presence:<user>  hash  device → "<node>:<instance>"; key TTL renewed by every holder's heartbeat
 *   <prefix>alive:<node>     string "<instance>", TTL renewed by that node's heartbeat
 *   <prefix>nodes            hash  node → "<instance>" of every node that beat; dead ones removed by `nodes()`
 * An entry counts only while its node's alive key holds the same instance,
 * so a dead node's entries stop routing as soon as its alive key expires (and
 * are deleted by the next lookup that meets them). `instance` tells a restarted
 * node from its previous process under the same node id.
 */
import type Redis from "ioredis";
import type { Presence, PresenceEntry } from "./presence.ts";

const ADD = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if old and old ~= ARGV[2] then
  local node, inst = string.match(old, '^(%d+):(.*)$')
  if node and redis.call('GET', ARGV[4] .. node) == inst then return tonumber(node) end
end
return -1`;

const REMOVE = `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0`;

const LOOKUP = `
local out, alive = {}, {}
for i, key in ipairs(KEYS) do
  local h = redis.call('HGETALL', key)
  local row = {}
  for j = 1, #h, 2 do
    local node, inst = string.match(h[j + 1], '^(%d+):(.*)$')
    local live = false
    if node then
      live = alive[node]
      if live == nil then live = redis.call('GET', ARGV[1] .. node) or false; alive[node] = live end
    end
    if live == inst then row[#row + 1] = h[j]; row[#row + 1] = node
    else redis.call('HDEL', key, h[j]) end
  end
  out[i] = row
end
return out`;

const NODES = `
local out = {}
local h = redis.call('HGETALL', KEYS[1])
for j = 1, #h, 2 do
  if redis.call('GET', ARGV[1] .. h[j]) == h[j + 1] then out[#out + 1] = h[j]
  else redis.call('HDEL', KEYS[1], h[j]) end
end
return out`;

type Scripted = Redis & {
  ibisPresenceNodes(key: string, alivePrefix: string): Promise<string[]>;
  ibisPresenceAdd(key: string, device: string, value: string, ttl: number, alivePrefix: string): Promise<number>;
  ibisPresenceRemove(key: string, device: string, value: string): Promise<number>;
  ibisPresenceLookup(...args: (string | number)[]): Promise<string[][]>;
};

const CHUNK = 500;

export interface RedisPresenceOptions {
  readonly redis: Redis;
  readonly nodeId: number;
  readonly prefix: string;
  readonly ttlMs: number;
  /** Tells this process from an earlier one with the same node id. */
  readonly instance?: string;
}

export class RedisPresence implements Presence {
  readonly nodeId: number;
  readonly #r: Scripted;
  readonly #prefix: string;
  readonly #ttl: number;
  readonly #value: string;
  readonly #instance: string;
  /** What this node holds, for heartbeat renewal and clear(). */
  readonly #held = new Map<bigint, Set<string>>();

  constructor(o: RedisPresenceOptions) {
    this.nodeId = o.nodeId;
    this.#prefix = o.prefix;
    this.#ttl = o.ttlMs;
    this.#instance = o.instance ?? crypto.randomUUID().slice(0, 12);
    this.#value = `${o.nodeId}:${this.#instance}`;
    const r = o.redis as Scripted;
    if (typeof r.ibisPresenceAdd !== "function") {
      o.redis.defineCommand("ibisPresenceAdd", { numberOfKeys: 1, lua: ADD });
      o.redis.defineCommand("ibisPresenceRemove", { numberOfKeys: 1, lua: REMOVE });
      o.redis.defineCommand("ibisPresenceLookup", { lua: LOOKUP });
      o.redis.defineCommand("ibisPresenceNodes", { numberOfKeys: 1, lua: NODES });
    }
    this.#r = r;
  }

  #userKey(userId: bigint): string {
    return `${this.#prefix}presence:${userId}`;
  }

  get #alivePrefix(): string {
    return `${this.#prefix}alive:`;
  }

  async add(userId: bigint, deviceId: string): Promise<number | undefined> {
    let devices = this.#held.get(userId);
    if (!devices) this.#held.set(userId, (devices = new Set()));
    devices.add(deviceId);
    const before = await this.#r.ibisPresenceAdd(this.#userKey(userId), deviceId, this.#value, this.#ttl, this.#alivePrefix);
    return before >= 0 && before !== this.nodeId ? before : undefined;
  }

  async remove(userId: bigint, deviceId: string): Promise<void> {
    const devices = this.#held.get(userId);
    devices?.delete(deviceId);
    if (devices?.size === 0) this.#held.delete(userId);
    await this.#r.ibisPresenceRemove(this.#userKey(userId), deviceId, this.#value);
  }

  async nodes(): Promise<number[]> {
    return (await this.#r.ibisPresenceNodes(this.#nodesKey, this.#alivePrefix)).map(Number);
  }

  get #nodesKey(): string {
    return `${this.#prefix}nodes`;
  }

  async lookup(userIds: readonly bigint[]): Promise<Map<bigint, PresenceEntry[]>> {
    const unique = [...new Set(userIds)];
    const out = new Map<bigint, PresenceEntry[]>();
    if (!unique.length) return out;
    const p = this.#r.pipeline() as unknown as { ibisPresenceLookup(...a: (string | number)[]): void; exec(): Promise<[Error | null, unknown][]> };
    for (let i = 0; i < unique.length; i += CHUNK) {
      const chunk = unique.slice(i, i + CHUNK);
      p.ibisPresenceLookup(chunk.length, ...chunk.map((u) => this.#userKey(u)), this.#alivePrefix);
    }
    const results = await p.exec();
    results.forEach(([err, rows], c) => {
      if (err) throw err;
      (rows as string[][]).forEach((row, j) => {
        if (!row.length) return;
        const userId = unique[c * CHUNK + j]!;
        const list: PresenceEntry[] = [];
        for (let k = 0; k < row.length; k += 2) list.push({ userId, deviceId: row[k]!, nodeId: Number(row[k + 1]) });
        out.set(userId, list);
      });
    });
    return out;
  }

  /**
   * Renews the alive key and this node's entries. HSETNX puts back an entry
   * that others deleted while this node looked dead (a Redis outage longer
   * than the TTL) without overwriting a device that has moved to another node.
   */
  async heartbeat(): Promise<void> {
    const p = this.#r.pipeline();
    p.set(`${this.#alivePrefix}${this.nodeId}`, this.#instance, "PX", this.#ttl);
    p.hset(this.#nodesKey, String(this.nodeId), this.#instance);
    for (const [userId, devices] of this.#held) {
      const key = this.#userKey(userId);
      for (const d of devices) p.hsetnx(key, d, this.#value);
      p.pexpire(key, this.#ttl);
    }
    const results = await p.exec();
    const failed = results?.find(([err]) => err);
    if (failed) throw failed[0];
  }

  async clear(): Promise<void> {
    const p = this.#r.pipeline() as unknown as { ibisPresenceRemove(...a: string[]): void; del(k: string): void; exec(): Promise<unknown> };
    for (const [userId, devices] of this.#held) for (const d of devices) p.ibisPresenceRemove(this.#userKey(userId), d, this.#value);
    p.ibisPresenceRemove(this.#nodesKey, String(this.nodeId), this.#instance);
    p.del(`${this.#alivePrefix}${this.nodeId}`);
    await p.exec();
    this.#held.clear();
  }
}
