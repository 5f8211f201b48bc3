import { describe, expect, test } from "bun:test";
import { contextSwitches, cpuMs, minorFaults, rssKb } from "./procstat.ts";

describe("procstat: this process's own counters", () => {
  test("minor faults grow when fresh memory is touched; CPU and RSS read", () => {
    const before = minorFaults(process.pid);
    // 64 MiB not mapped before in this process: every page is a fault when first written.
    const fresh = new Uint8Array(64 * 1024 * 1024).fill(1);
    const grew = minorFaults(process.pid) - before;
    // One per 4 KiB page here; at least one per 2 MiB where transparent huge pages are "always".
    expect(grew).toBeGreaterThanOrEqual(fresh.length / (2 * 1024 * 1024));
    expect(cpuMs(process.pid)).toBeGreaterThan(0);
    expect(rssKb(process.pid)).toBeGreaterThan(fresh.length / 1024 / 2);
  });

  test("the machine's context switches grow when this process sleeps (it gives up its core)", async () => {
    const before = contextSwitches();
    expect(before).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) await Bun.sleep(2);
    expect(contextSwitches()).toBeGreaterThanOrEqual(before + 5);
  });

  test("a process that is gone reads as zero", () => {
    expect([minorFaults(2 ** 30), cpuMs(2 ** 30), rssKb(2 ** 30)]).toEqual([0, 0, 0]);
  });
});
