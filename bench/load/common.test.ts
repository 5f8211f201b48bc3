import { describe, expect, test } from "bun:test";
import { Window } from "./common.ts";

/** Runs `body` with stdout captured: each line, when it was written and whether the window measured then. */
async function captured(w: Window, body: () => Promise<void>): Promise<{ line: string; at: number; measuring: boolean }[]> {
  const out: { line: string; at: number; measuring: boolean }[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((s: string | Uint8Array) => (out.push({ line: String(s), at: performance.now(), measuring: w.measuring }), true)) as typeof write;
  try {
    await body();
  } finally {
    process.stdout.write = write;
  }
  return out;
}

describe("Window", () => {
  // bench/limit.ts starts its large messages on this event: it must mean "measuring from now".
  test("announces its window when it opens, after the warm-up, once", async () => {
    const w = new Window(40, 30);
    let started = 0;
    const lines = await captured(w, async () => {
      started = performance.now();
      w.start();
      await new Promise<void>((resolve) => (w.onStop = resolve));
    });
    const measuring = lines.filter((l) => JSON.parse(l.line).event === "measuring");
    expect(measuring).toHaveLength(1);
    expect(measuring[0]!.measuring).toBe(true);
    expect(measuring[0]!.at - started).toBeGreaterThanOrEqual(35);
  });

  test("onOpen runs once as the window opens, before it measures and before its announcement", async () => {
    const w = new Window(20, 20);
    const seen: { measuring: boolean; at: number }[] = [];
    const lines = await captured(w, async () => {
      w.onOpen = () => seen.push({ measuring: w.measuring, at: performance.now() });
      w.start();
      await new Promise<void>((resolve) => (w.onStop = resolve));
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.measuring).toBe(false);
    expect(lines.map((l) => JSON.parse(l.line).event)).toEqual(["measuring"]);
    expect(lines[0]!.at).toBeGreaterThanOrEqual(seen[0]!.at); // the announcement comes after it
  });

  test("a generator's first line is written as it starts (Bun makes stdout on its first use: not mid-run)", () => {
    const run = Bun.spawnSync(["bun", "-e", `await import(${JSON.stringify(`${import.meta.dir}/common.ts`)}); await Bun.sleep(20); process.exit(0);`], {
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(run.stdout.toString().split("\n")[0]).toBe(JSON.stringify({ event: "started" }));
  });

  test("a window stopped inside its warm-up announces nothing", async () => {
    const w = new Window(30, 30);
    const lines = await captured(w, async () => {
      w.start();
      w.stop();
      await Bun.sleep(60);
    });
    expect(lines).toHaveLength(0);
    expect(w.seconds).toBe(0);
    let opened = false;
    const v = new Window(10, 10);
    v.onOpen = () => (opened = true);
    v.start();
    v.stop();
    await Bun.sleep(30);
    expect(opened).toBe(false);
  });
});
