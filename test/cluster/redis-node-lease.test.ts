import { expect, test } from "bun:test";
import { leaseNodeIdFromRedis, nodeIdKey } from "../../src/cluster/redis-node-lease.ts";
import { useRedis } from "../bus/redis-fixture.ts";

const r = useRedis();

test("concurrent leases get distinct lowest ids; a released id is reused", async () => {
  const { redis, prefix } = r;
  const leases = await Promise.all(Array.from({ length: 5 }, (_, i) => leaseNodeIdFromRedis(redis, prefix, `h${i}`)));
  expect(leases.map((l) => l.nodeId).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4]);
  const ttl = await redis.pttl(nodeIdKey(prefix, 0));
  expect(ttl).toBeGreaterThan(0);
  await leases[2]!.release();
  const again = await leaseNodeIdFromRedis(redis, prefix, "late");
  expect(again.nodeId).toBe(leases[2]!.nodeId);
  for (const l of [...leases, again]) await l.release();
});

test("renew extends the lease, takes a lapsed one back, and refuses when another holder has it", async () => {
  const { redis, prefix } = r;
  const lease = await leaseNodeIdFromRedis(redis, prefix, "me", 60_000);
  const key = nodeIdKey(prefix, lease.nodeId);
  await redis.pexpire(key, 50);
  await lease.renew();
  expect(await redis.pttl(key)).toBeGreaterThan(50);
  await redis.del(key); // lapsed
  await lease.renew();
  expect(await redis.get(key)).toBe("me");
  await redis.set(key, "someone-else");
  await expect(lease.renew()).rejects.toThrow(/another process/);
  await lease.release(); // not ours: left alone
  expect(await redis.get(key)).toBe("someone-else");
});
