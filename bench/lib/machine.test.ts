import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { noiseCounters, noiseSince, writeback, writebackText } from "./machine.ts";

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

describe("the kernel's writeback settings beside a run", () => {
  test("read from /proc/sys/vm (null where the kernel has no such file)", () => {
    const w = writeback();
    for (const [name, value] of Object.entries(w)) {
      let text: string | undefined;
      try {
        text = readFileSync(`/proc/sys/vm/${name}`, "utf8");
      } catch {
        text = undefined;
      }
      expect(value).toBe(text === undefined ? null : Number(text.trim()));
    }
  });

  test.each([
    [{ dirty_background_bytes: 0, dirty_background_ratio: 10, dirty_expire_centisecs: 3000, dirty_writeback_centisecs: 500 }, ""],
    [{ dirty_background_bytes: 33554432, dirty_background_ratio: 0, dirty_expire_centisecs: 3000, dirty_writeback_centisecs: 500 }, " · kernel writeback tuned: background writeback from 32 MiB"],
    [{ dirty_background_bytes: 0, dirty_background_ratio: 5, dirty_expire_centisecs: 500, dirty_writeback_centisecs: 100 }, " · kernel writeback tuned: background writeback from 5 %, dirty pages written after 5 s, periodic sweep every 1 s"],
    [{ dirty_background_bytes: 0, dirty_background_ratio: 10, dirty_expire_centisecs: 3000, dirty_writeback_centisecs: 0 }, " · kernel writeback tuned: periodic sweep off"],
    [{ dirty_background_bytes: 0, dirty_background_ratio: 10, dirty_expire_centisecs: 3000, dirty_writeback_centisecs: 100 }, " · kernel writeback tuned: periodic sweep every 1 s"],
    [{ dirty_background_bytes: null, dirty_background_ratio: null, dirty_expire_centisecs: null, dirty_writeback_centisecs: null }, ""],
  ] as const)("the report names what differs from the kernel's defaults: %j", (w, text) => {
    expect(writebackText(w)).toBe(text);
  });

  test("a result written before the settings were recorded reads as nothing", () => {
    expect(writebackText(undefined)).toBe("");
  });
});
