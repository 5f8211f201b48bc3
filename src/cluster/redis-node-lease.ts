import type Redis from "ioredis";
import { MAX_NODE_ID } from "../ids/tsid.ts";
import { LEASE_TTL_MS, type NodeLease } from "./node-lease.ts";

// Claims the lowest free id in one round trip: SET <prefix>nodeid:<n> holder NX PX ttl.
const CLAIM = `
for n = 0, tonumber(ARGV[3]) do
  if redis.call('SET', ARGV[1] .. n, ARGV[2], 'NX', 'PX', ARGV[4]) then return n end
end
return -1`;

// Renews our lease; if it lapsed and nobody took the id, takes it back; 0 when someone else holds it.
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export const nodeIdKey = (prefix: string, nodeId: number): string => `${prefix}nodeid:${nodeId}`;

/**
 * Leases the lowest free node id from Redis (used when REDIS_URL is set and
 * IBIS_NODE_ID is not): the key `<prefix>nodeid:<n>` holds the holder string
 * with a TTL the caller renews every TTL/3. A crashed node's id frees itself
 * after the TTL. `renew` rejects when another process holds the id: minted
 * ids could collide, so the caller must stop.
 */
export async function leaseNodeIdFromRedis(redis: Redis, prefix: string, holder: string, ttlMs = LEASE_TTL_MS): Promise<NodeLease> {
  const nodeId = Number(await redis.eval(CLAIM, 0, `${prefix}nodeid:`, holder, MAX_NODE_ID, ttlMs));
  if (nodeId < 0) throw new Error(`all ${MAX_NODE_ID + 1} node ids are leased in Redis`);
  const key = nodeIdKey(prefix, nodeId);
  return {
    nodeId,
    renew: async () => {
      if (Number(await redis.eval(RENEW, 1, key, holder, ttlMs)) !== 1) {
        throw new Error(`node id ${nodeId} is now leased by another process`);
      }
    },
    release: async () => {
      await redis.eval(RELEASE, 1, key, holder);
    },
  };
}
