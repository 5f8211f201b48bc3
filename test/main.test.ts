import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");

/** A free loopback port (bound once, released). */
function freePort(): number {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

/** `bun src/main.ts` over memory:// on a free port; resolves once /health answers. */
async function startMain(env: Record<string, string>) {
  const port = freePort();
  const proc = Bun.spawn(["bun", "src/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: "memory://", IBIS_LOG_LEVEL: "silent", ...env },
    stdout: "ignore",
    stderr: "ignore",
  });
  for (let i = 0; i < 200 && proc.exitCode === null; i++) {
    const r = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
    if (r?.status === 200) return { proc, port };
    await Bun.sleep(100);
  }
  proc.kill("SIGKILL");
  throw new Error("main did not answer /health");
}

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
