import { describe, expect, test } from "bun:test";
import { noiseCounters, noiseSince } from "./machine.ts";

describe("host noise over a run", () => {
  test("steal and I/O stall shares are percentages of the run (null where the kernel does not count them)", async () => {
    const start = noiseCounters();
    expect(start.cpuTicks).toBeGreaterThan(0);
    await Bun.sleep(50);
    const n = noiseSince(start);
    expect(n.cpu_steal_pct === null || (n.cpu_steal_pct >= 0 && n.cpu_steal_pct <= 100)).toBe(true);
    // Stall time can exceed wall time only by the counters' rounding.
    expect(n.io_stalled_pct === null || (n.io_stalled_pct >= 0 && n.io_stalled_pct <= 101)).toBe(true);
    if (start.ioSomeUs !== undefined) expect(n.io_stalled_pct).not.toBeNull();
  });
});
