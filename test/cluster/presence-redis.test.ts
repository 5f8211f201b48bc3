import { expect, test } from "bun:test";
import type Redis from "ioredis";
import { RedisPresence } from "../../src/cluster/presence-redis.ts";
import { connect, dropPrefix, uniquePrefix } from "../bus/redis-fixture.ts";
import { runPresenceSuite } from "./presence.case.ts";

const TTL = 30_000;

async function fixture(redis: Redis, prefix: string, id: number): Promise<RedisPresence> {
  const p = new RedisPresence({ redis, nodeId: id, prefix, ttlMs: TTL });
  await p.heartbeat();
  return p;
}

runPresenceSuite("redis", async () => {
  const redis = await connect();
  const prefix = uniquePrefix();
  return {
    node: (id) => fixture(redis, prefix, id),
    kill: async (id) => {
      await redis.del(`${prefix}alive:${id}`); // what the alive key's TTL does to a node that stopped beating
    },
    dispose: async () => {
      await dropPrefix(redis, prefix);
      redis.disconnect();
    },
  };
});

test("redis presence: keys carry the TTL, a heartbeat renews them, lookups delete dead entries", async () => {
  const redis = await connect();
  const prefix = uniquePrefix();
  try {
    const n1 = await fixture(redis, prefix, 1);
    const n2 = await fixture(redis, prefix, 2);
    await n1.add(7n, "a");
    await n2.add(7n, "b");
    for (const key of [`${prefix}alive:1`, `${prefix}presence:7`]) {
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(TTL);
    }
    await redis.pexpire(`${prefix}presence:7`, 10);
    await n1.heartbeat();
    expect(await redis.pttl(`${prefix}presence:7`)).toBeGreaterThan(10);
    await redis.del(`${prefix}alive:1`);
    await n2.lookup([7n]);
    expect(await redis.hkeys(`${prefix}presence:7`)).toEqual(["b"]);
    // After an outage longer than the TTL others have deleted n1's entries; its next heartbeat puts them back.
    await redis.del(`${prefix}presence:7`);
    await n1.heartbeat();
    expect(await redis.hgetall(`${prefix}presence:7`)).toEqual({ a: expect.stringMatching(/^1:/) });
    // A restarted process under the same node id does not revive its predecessor's entries.
    await n1.add(8n, "x");
    const again = await fixture(redis, prefix, 1);
    expect((await again.lookup([8n])).size).toBe(0);
  } finally {
    await dropPrefix(redis, prefix);
    redis.disconnect();
  }
});
