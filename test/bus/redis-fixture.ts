import { afterAll, beforeAll } from "bun:test";
import type Redis from "ioredis";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openRedis } from "../../src/cluster/redis.ts";
import { createLogger } from "../../src/log.ts";
import { testEnv } from "../support/env.ts";

export const quiet = createLogger("silent");

/** A key prefix nobody else uses, so runs never see each other's keys. */
export const uniquePrefix = (): string => `ibis:test:${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}:`;

export function sharedRedisUrl(): string {
  const url = testEnv.redisUrl;
  if (!url) throw new Error("Redis is not configured for tests (see test/support/preload.ts)");
  return url;
}

export const connect = (url = sharedRedisUrl()): Promise<Redis> => openRedis(url, quiet, "ibis-test");

/** Deletes every key under `prefix`. */
export async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== "0");
}

/**
 * A private redis-server on its own loopback port (never the shared 6379),
 * for tests that stop and restart Redis.
 */
export class ScratchRedis {
  readonly url: string;
  constructor(
    readonly port: number,
    readonly dir?: string,
  ) {
    this.url = `redis://127.0.0.1:${port}`;
  }

  /** `persist`: an append-only file fsynced on every write, so a restart keeps streams and pending lists. */
  static async start(persist = false): Promise<ScratchRedis> {
    const port = 16_390 + Math.floor(Math.random() * 2000);
    const s = new ScratchRedis(port, persist ? mkdtempSync(join(tmpdir(), "ibis-redis-")) : undefined);
    await s.up();
    return s;
  }

  async up(): Promise<void> {
    const persistence = this.dir ? ["--appendonly", "yes", "--appendfsync", "always", "--dir", this.dir] : ["--appendonly", "no"];
    const p = Bun.spawn(["redis-server", "--port", String(this.port), "--bind", "127.0.0.1", "--save", "", ...persistence, "--daemonize", "yes"], {
      stdout: "ignore",
      stderr: "ignore",
    });
    await p.exited;
    for (let i = 0; i < 100; i++) {
      if (await this.#cli("ping").then((o) => o.includes("PONG"))) return;
      await Bun.sleep(50);
    }
    throw new Error(`scratch redis on ${this.port} did not start`);
  }

  async down(): Promise<void> {
    await this.#cli("shutdown", "nosave");
    for (let i = 0; i < 100; i++) {
      if (!(await this.#cli("ping").then((o) => o.includes("PONG")))) return;
      await Bun.sleep(50);
    }
  }

  /** Shuts down and removes its files. */
  async dispose(): Promise<void> {
    await this.down();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  async #cli(...args: string[]): Promise<string> {
    const p = Bun.spawn(["redis-cli", "-p", String(this.port), ...args], { stdout: "pipe", stderr: "ignore" });
    const out = await new Response(p.stdout).text();
    await p.exited;
    return out;
  }
}

/** For the enclosing describe (or file): a shared-Redis connection and a private prefix, removed afterwards. */
export function useRedis(): { readonly redis: Redis; readonly prefix: string } {
  const ctx = { redis: undefined as unknown as Redis, prefix: uniquePrefix() };
  beforeAll(async () => {
    ctx.redis = await connect();
  });
  afterAll(async () => {
    await dropPrefix(ctx.redis, ctx.prefix);
    ctx.redis.disconnect();
  });
  return ctx;
}

/** For the enclosing describe: a private redis-server, shut down afterwards. */
export function useScratchRedis(persist = false): { readonly server: ScratchRedis } {
  const ctx = { server: undefined as unknown as ScratchRedis };
  beforeAll(async () => {
    ctx.server = await ScratchRedis.start(persist);
  });
  afterAll(() => ctx.server.dispose());
  return ctx;
}
