import Redis, { type RedisOptions } from "ioredis";
import type { Logger } from "../log.ts";
import { metrics } from "../metrics/index.ts";

/**
 * Opens an ioredis connection for the cluster parts. Commands fail fast while
 * Redis is unreachable (no offline queue, no per-request retries): the bus
 * keeps its own bounded buffer and presence calls report the failure, rather
 * than piling up inside the client. Reconnection runs forever in the
 * background; one warning per outage, one info when it ends.
 */
export async function openRedis(url: string, log: Logger, name = "ibis"): Promise<Redis> {
  const redis = new Redis({
    ...redisUrlOptions(url),
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 3000,
    connectionName: name,
    retryStrategy: (times) => Math.min(times * 100, 1000),
  });
  watchRedis(redis, log, name);
  try {
    await redis.connect();
  } catch (e) {
    redis.disconnect();
    throw new Error(`Redis at REDIS_URL did not answer: ${(e as Error).message}`);
  }
  return redis;
}

/** Logs the start and the end of an outage once each, not every reconnect attempt. */
export function watchRedis(redis: Redis, log: Logger, name: string): void {
  let down = false;
  redis.on("error", (e: Error) => {
    metrics.redisErrors.inc();
    if (down) return;
    down = true;
    log.warn("redis unreachable", { conn: name, err: e });
  });
  redis.on("ready", () => {
    if (!down) return;
    down = false;
    log.info("redis reachable again", { conn: name });
  });
}

/** A second connection with the same options, for a blocking reader. */
export function duplicateRedis(redis: Redis, log: Logger, name: string): Redis {
  const dup = redis.duplicate({ connectionName: name, lazyConnect: false });
  watchRedis(dup, log, name);
  return dup;
}

/**
 * REDIS_URL (`redis://[user:pass@]host[:port][/db]`, `rediss://` for TLS) as
 * ioredis options, read with the WHATWG URL parser: handing ioredis the string
 * makes it call the deprecated `url.parse`, which prints a warning per process.
 */
export function redisUrlOptions(url: string): RedisOptions {
  const u = new URL(url);
  if (u.protocol !== "redis:" && u.protocol !== "rediss:") throw new Error("REDIS_URL must start with redis:// or rediss://");
  const out: RedisOptions = { host: u.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1", port: u.port ? Number(u.port) : 6379 };
  if (u.username) out.username = decodeURIComponent(u.username);
  if (u.password) out.password = decodeURIComponent(u.password);
  if (u.pathname.length > 1) out.db = Number(u.pathname.slice(1));
  if (u.protocol === "rediss:") out.tls = {};
  return out;
}
