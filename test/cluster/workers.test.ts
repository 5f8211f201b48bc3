import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { workerRefusals, workersArg } from "../../src/cluster/workers.ts";
import { testConfig } from "../../src/config/index.ts";
import { until } from "../bus/collector.ts";
import { sharedRedisUrl, useRedis } from "../bus/redis-fixture.ts";
import { alive, descendants, tracked } from "../support/children.ts";
import { freshPostgresDatabase } from "../support/stores.ts";
import { childEnv, freePort, MAIN } from "./processes.ts";

test.each([
  ["one worker needs nothing", {}, []],
  ["no Redis", { workers: 2, databaseUrl: "postgres://x/y", redisUrl: "", port: 9800 }, [/REDIS_URL/]],
  ["PGlite", { workers: 2, databaseUrl: "", redisUrl: "redis://x", port: 9800 }, [/PGlite/]],
  ["port 0", { workers: 2, databaseUrl: "postgres://x/y", redisUrl: "redis://x", port: 0 }, [/PORT/]],
  ["fixed node id too high", { workers: 4, databaseUrl: "postgres://x/y", redisUrl: "redis://x", port: 1, nodeId: 1021 }, [/IBIS_NODE_ID/]],
  ["all set", { workers: 2, databaseUrl: "postgresql://x/y", redisUrl: "redis://x", port: 9800 }, []],
] as const)("workerRefusals: %s", (_n, overrides, want) => {
  const got = workerRefusals(testConfig(overrides));
  expect(got).toHaveLength(want.length);
  want.forEach((re, i) => expect(got[i]).toMatch(re));
});

test.each([
  [["--workers", "3"], "3"],
  [["--workers=2"], "2"],
  [["--other"], undefined],
])("workersArg %p", (argv, want) => {
  expect(workersArg(argv)).toBe(want);
});

test("--workers 2 without REDIS_URL exits non-zero with a clear message", async () => {
  const p = Bun.spawn([process.execPath, MAIN, "--workers", "2"], { env: childEnv({ PORT: "9" }), stdout: "pipe", stderr: "pipe" });
  expect(await p.exited).toBe(78);
  expect(await new Response(p.stderr).text()).toContain("IBIS_WORKERS=2 needs REDIS_URL");
});

test("IBIS_WORKERS=2 on PGlite exits non-zero with a clear message", async () => {
  const p = Bun.spawn([process.execPath, MAIN], {
    env: childEnv({ PORT: "9", IBIS_WORKERS: "2", REDIS_URL: sharedRedisUrl(), DATABASE_URL: "memory://" }),
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(await p.exited).toBe(78);
  expect(await new Response(p.stderr).text()).toContain("PGlite database belongs to one process");
});

describe("2 workers on PostgreSQL and Redis", () => {
  const r = useRedis();
  let db: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    db = await freshPostgresDatabase();
  });
  afterAll(() => db.drop());

  /**
   * Starts the supervisor and waits until both workers have answered /readyz (new connection each time).
   * `log`: the supervisor's and the workers' stderr (the workers inherit it), whole once every one of them exited.
   * A worker's stop may take 5 s before it gives up and says where it hung (main.ts), well inside a test's time.
   */
  async function startWorkers(): Promise<{ sup: Subprocess; port: number; nodeIds: number[]; log: Promise<string> }> {
    const port = freePort();
    const sup = tracked(
      Bun.spawn([process.execPath, MAIN, "--workers", "2"], {
        env: childEnv({
          PORT: String(port),
          HOST: "127.0.0.1",
          DATABASE_URL: db.url,
          REDIS_URL: sharedRedisUrl(),
          IBIS_REDIS_PREFIX: r.prefix,
          IBIS_SHUTDOWN_TIMEOUT_MS: "5000",
        }),
        stdout: "inherit",
        stderr: "pipe",
      }),
    );
    const log = new Response(sup.stderr).text();
    const seen = new Set<number>();
    try {
      // Bounded by the test timeout; SO_REUSEPORT spreads new connections, so both answer sooner or later.
      while (seen.size < 2 && sup.exitCode === null) {
        const res = await fetch(`http://127.0.0.1:${port}/readyz`, { headers: { connection: "close" } }).catch(() => undefined);
        if (res?.status === 200) seen.add(((await res.json()) as { payload: { node_id: number } }).payload.node_id);
        await Bun.sleep(20);
      }
    } catch (e) {
      sup.kill("SIGKILL");
      throw e;
    }
    return { sup, port, nodeIds: [...seen], log };
  }

  test("both answer on one port with different node ids; SIGTERM stops both and releases their ids", async () => {
    const { sup, nodeIds, log } = await startWorkers();
    try {
      expect(nodeIds).toHaveLength(2);
      expect(await r.redis.exists(...nodeIds.map((id) => `${r.prefix}nodeid:${id}`))).toBe(2);
      sup.kill("SIGTERM");
      expect(await sup.exited).toBe(0);
      expect((await log).split("\n").filter((l) => l.includes("shutdown did not finish"))).toEqual([]);
      expect(await r.redis.exists(...nodeIds.flatMap((id) => [`${r.prefix}nodeid:${id}`, `${r.prefix}alive:${id}`]))).toBe(0);
    } finally {
      sup.kill("SIGKILL");
    }
  }, 30_000);

  test("workers whose supervisor is SIGKILLed shut down instead of holding the port, and exit", async () => {
    const { sup, port, nodeIds, log } = await startWorkers();
    const workers = descendants(sup.pid);
    try {
      expect(workers).toHaveLength(2);
      sup.kill("SIGKILL");
      await sup.exited;
      expect(nodeIds).toHaveLength(2);
      await until(async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined)) === undefined);
      await until(async () => (await r.redis.exists(...nodeIds.map((id) => `${r.prefix}alive:${id}`))) === 0);
      // Not only off the port: the processes are gone (an orphan stuck in its shutdown would outlive the run).
      await until(async () => !workers.some(alive));
      // Exited because their stop finished, not because it overran its deadline.
      expect((await log).split("\n").filter((l) => l.includes("shutdown did not finish"))).toEqual([]);
    } finally {
      for (const pid of workers.filter(alive)) {
        try {
          process.kill(pid, "SIGKILL"); // a leftover; one gone meanwhile (ESRCH) must not hide the failure that left it
        } catch {}
      }
    }
  }, 30_000);
});
