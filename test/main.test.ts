import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { sharedRedisUrl, uniquePrefix } from "./bus/redis-fixture.ts";
import { befriend, freePort, openOn, signup, startIbisProcess, TcpRelay, type IbisProcess } from "./cluster/processes.ts";
import { procList, tracked } from "./support/children.ts";
import { freshPostgresDatabase } from "./support/stores.ts";
import { c2c } from "./support/ws.ts";

const ROOT = resolve(import.meta.dir, "..");

/** `bun src/main.ts` over memory:// on a free port; resolves once /health answers. */
async function startMain(env: Record<string, string | undefined>, bunFlags: string[] = []) {
  const port = freePort();
  const proc = tracked(
    Bun.spawn(["bun", ...bunFlags, "src/main.ts"], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: "memory://", IBIS_LOG_LEVEL: "silent", ...env },
      stdout: "ignore",
      stderr: "ignore",
    }),
  );
  for (let i = 0; i < 200 && proc.exitCode === null; i++) {
    const r = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
    if (r?.status === 200) return { proc, port };
    await Bun.sleep(100);
  }
  proc.kill("SIGKILL");
  throw new Error("main did not answer /health");
}

describe("the allocator's settings (src/runtime/allocator.ts)", () => {
  test("unset: the node runs with MIMALLOC_PURGE_HOLES=0, in the same process, with Bun's flags kept", async () => {
    const { proc, port } = await startMain({ MIMALLOC_PURGE_HOLES: undefined }, ["--smol"]);
    try {
      // The pid the supervisor (here: the test) knows is the one serving, started again with the variable set.
      expect(procList(proc.pid, "environ")).toContain("MIMALLOC_PURGE_HOLES=0");
      const cmdline = procList(proc.pid, "cmdline");
      expect(cmdline).toContain("--smol");
      expect(cmdline.at(-2)).toEndWith("src/main.ts");
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
    expect(proc.exitCode).toBe(0);
  }, 30_000);

  test("an operator's own value is kept as set", async () => {
    const { proc } = await startMain({ MIMALLOC_PURGE_HOLES: "1" });
    try {
      const env = procList(proc.pid, "environ");
      expect(env).toContain("MIMALLOC_PURGE_HOLES=1");
      expect(env).not.toContain("MIMALLOC_PURGE_HOLES=0");
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  }, 30_000);
});

describe("IBIS_BENCH_GC_SIGNAL (bench/ reads RSS after a full GC)", () => {
  test("on: SIGUSR1 runs a GC and the node keeps serving", async () => {
    const { proc, port } = await startMain({ IBIS_BENCH_GC_SIGNAL: "1" });
    try {
      proc.kill("SIGUSR1");
      await Bun.sleep(200);
      expect(proc.exitCode).toBeNull();
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  }, 30_000);

  test("off (default): no handler is installed, so SIGUSR1 keeps its default action", async () => {
    const { proc } = await startMain({});
    proc.kill("SIGUSR1");
    await proc.exited;
    expect(proc.signalCode).toBe("SIGUSR1");
  }, 30_000);
});

describe("SIGTERM while the database stopped answering", () => {
  test("the process still exits: code 1 once grace + IBIS_SHUTDOWN_TIMEOUT_MS are over, naming the step that hung", async () => {
    const db = await freshPostgresDatabase();
    const pg = await TcpRelay.start(db.url);
    let node: IbisProcess | undefined;
    try {
      node = await startIbisProcess({
        databaseUrl: pg.via(db.url),
        redisUrl: sharedRedisUrl(),
        prefix: uniquePrefix(),
        extra: { IBIS_SHUTDOWN_TIMEOUT_MS: "1500" },
        stderr: "pipe",
      });
      const log = new Response(node.proc.stderr as ReadableStream).text();
      const [alice, bob] = await Promise.all([signup(node.url, "alice"), signup(node.url, "bob")]);
      await befriend(node.url, alice, bob);
      const a = await openOn(node, alice, "a1");
      pg.freeze();
      const m = c2c(alice.userId, bob.userId, "into a database that stopped answering");
      a.send(m);
      await Bun.sleep(300); // the message's insert is on its way to the frozen database
      const t0 = performance.now();
      node.proc.kill("SIGTERM");
      expect(await node.proc.exited).toBe(1);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(1_400);
      const lines = (await log).split("\n").filter((l) => l.includes("shutdown did not finish"));
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ level: "error", signal: "SIGTERM", after_ms: 1500, step: "delivery flush" });
      // Nothing was acknowledged that was not stored: the client never got a SERVER_ACK.
      expect(a.pending.some((e) => e.kind === "message" && e.msg.in_reply_to === m.id)).toBe(false);
      await a.close();
    } finally {
      node?.proc.kill("SIGKILL");
      await pg.cut();
      await db.drop();
    }
  }, 30_000);
});
