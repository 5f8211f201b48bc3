import { describe, expect, test } from "bun:test";
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { availableParallelism } from "node:os";
import {
  contextSwitches,
  cpuMeter,
  cpuMs,
  diskWrittenBytes,
  dirtyKb,
  idleShares,
  machineCpu,
  minorFaults,
  physicalDisks,
  rssKb,
  runQueueWaitMs,
  sysMs,
  writebackMeter,
} from "./procstat.ts";

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

  test("the kernel's part: syscalls grow it, pure computation hardly, and it is part of the whole", () => {
    const pid = process.pid;
    const meter = cpuMeter(pid);
    // One-byte writes to /dev/null until the kernel's part grew by 50 ms (ticks are 10 ms): time in syscalls.
    const fd = openSync("/dev/null", "w");
    const one = new Uint8Array(1);
    const sys0 = sysMs(pid);
    for (const end = performance.now() + 10_000; sysMs(pid) - sys0 < 50 && performance.now() < end; ) for (let i = 0; i < 1000; i++) writeSync(fd, one);
    closeSync(fd);
    expect(sysMs(pid) - sys0).toBeGreaterThanOrEqual(50);
    const m = meter();
    expect(m.sys_pct).toBeGreaterThan(0);
    expect(m.sys_pct).toBeLessThanOrEqual(m.cpu_pct);
    // Arithmetic until the whole grew by 200 ms: the kernel's part of that stays small. Polled every few ms (a
    // reading is itself a dozen syscalls: polled often, the readings were the kernel's part).
    const [cpu1, sys1] = [cpuMs(pid), sysMs(pid)];
    let x = 0;
    for (const end = performance.now() + 10_000; cpuMs(pid) - cpu1 < 200 && performance.now() < end; ) for (let i = 0; i < 5_000_000; i++) x = (x * 31 + i) | 0;
    expect(cpuMs(pid) - cpu1).toBeGreaterThanOrEqual(200);
    expect(sysMs(pid) - sys1).toBeLessThanOrEqual(50);
    expect(x).not.toBeNaN();
  });

  test("a process that is gone reads as zero", () => {
    expect([minorFaults(2 ** 30), cpuMs(2 ** 30), sysMs(2 ** 30), rssKb(2 ** 30), runQueueWaitMs(2 ** 30)]).toEqual([0, 0, 0, 0, 0]);
  });
});

describe("procstat: waiting for a core", () => {
  const spin = (cpu: number) => Bun.spawn(["taskset", "-c", String(cpu), process.execPath, "-e", "for (;;) {}"], { stdout: "ignore", stderr: "inherit" });

  test("a busy process is always running or waiting; two on one core wait about half the time; a sleeping one does not wait", async () => {
    const [a, b, alone] = [spin(0), spin(0), spin(1)];
    const idle = Bun.spawn(["sleep", "5"]);
    try {
      await Bun.sleep(300); // all started and spinning
      const meters = [a, b, alone, idle].map((p) => cpuMeter(p.pid));
      const waits0 = [a, b].map((p) => runQueueWaitMs(p.pid));
      await Bun.sleep(1_000);
      const [ma, mb, mAlone, mIdle] = meters.map((m) => m());
      // Never sleeping, each is on a core or waiting for one: the two add up to the wall time, whatever else runs
      // (read as the run time, the "wait" of the one alone on its core would double it).
      for (const m of [ma!, mb!, mAlone!]) {
        expect(m.cpu_pct + m.wait_pct).toBeGreaterThan(80);
        expect(m.cpu_pct + m.wait_pct).toBeLessThan(120);
      }
      // One core between two: each waits for the other about half the time.
      for (const m of [ma!, mb!]) expect(m.wait_pct).toBeGreaterThan(25);
      for (const [i, p] of [a, b].entries()) expect(runQueueWaitMs(p.pid) - waits0[i]!).toBeGreaterThan(250);
      expect(mIdle!.wait_pct).toBeLessThan(5);
    } finally {
      for (const p of [a, b, alone, idle]) p.kill();
    }
  });
});

describe("procstat: the machine's idle share", () => {
  const at = (total: number, idle: number, iowait: number) => ({ total, idle, iowait });
  test.each([
    // [first reading, second reading, idle %, of it I/O wait %]
    [at(1_000, 100, 0), at(1_200, 150, 10), 30, 5], // 200 ticks: 50 idle + 10 waiting on I/O
    [at(0, 0, 0), at(400, 0, 0), 0, 0], // every core busy
    [at(0, 0, 0), at(400, 300, 100), 100, 25], // every core idle, a quarter of it with I/O outstanding
    [at(500, 10, 10), at(500, 10, 10), 0, 0], // no tick between the readings: nothing to divide
  ])("%o → %o: idle %d, I/O wait %d (shares of all cores)", (a, b, idle, iowait) => {
    expect(idleShares(a, b)).toEqual({ idle_pct: idle, iowait_pct: iowait });
  });

  test("every core spinning leaves the machine hardly idle; the ticks counted are all cores' time", async () => {
    const cores = availableParallelism();
    const spinners = Array.from({ length: cores }, (_, i) =>
      Bun.spawn(["taskset", "-c", String(i), process.execPath, "-e", "for (;;) {}"], { stdout: "ignore", stderr: "inherit" }),
    );
    try {
      await Bun.sleep(300); // all started and spinning
      const a = machineCpu();
      const t0 = performance.now();
      await Bun.sleep(1_000);
      const b = machineCpu();
      const seconds = (performance.now() - t0) / 1000;
      // Clock ticks are 1/100 s per core (USER_HZ).
      expect(b.total - a.total).toBeGreaterThan(cores * 100 * seconds * 0.8);
      expect(b.total - a.total).toBeLessThan(cores * 100 * seconds * 1.2);
      const shares = idleShares(a, b);
      expect(shares.idle_pct).toBeLessThan(20);
      expect(shares.iowait_pct).toBeLessThanOrEqual(shares.idle_pct);
    } finally {
      for (const p of spinners) p.kill();
    }
  });

  test("one core spinning of several: the others' idle time is counted as idle", async () => {
    const cores = availableParallelism();
    if (cores < 2) return; // nothing left idle to see
    const spinner = Bun.spawn(["taskset", "-c", "0", process.execPath, "-e", "for (;;) {}"], { stdout: "ignore", stderr: "inherit" });
    try {
      await Bun.sleep(300);
      const a = machineCpu();
      await Bun.sleep(1_000);
      const shares = idleShares(a, machineCpu());
      // About (cores − 1) / cores of the time is idle; read from another field (system, user) it would be near 0.
      expect(shares.idle_pct).toBeGreaterThan(10);
      expect(shares.idle_pct).toBeLessThan(100 - 100 / cores + 10);
    } finally {
      spinner.kill();
    }
  });
});

describe("procstat: the kernel's writeback", () => {
  test("dirty memory is Dirty + Writeback of /proc/meminfo", () => {
    const meminfo = "MemTotal:       24684152 kB\nDirty:             1234 kB\nWriteback:          66 kB\nWritebackTmp:        9 kB\n";
    expect(dirtyKb(meminfo)).toBe(1300);
    expect(dirtyKb()).toBeGreaterThanOrEqual(0);
  });

  test("bytes written count whole disks only, in 512-byte sectors", () => {
    expect([...physicalDisks(["loop0", "ram1", "zram0", "dm-0", "md127", "vda", "nvme0n1", "sda"])]).toEqual(["vda", "nvme0n1", "sda"]);
    const stats = [
      " 253       0 vda 100 0 2000 50 300 10 4000 90 0 120 140",
      " 253       1 vda1 100 0 2000 50 300 10 4000 90 0 120 140",
      "   7       0 loop0 1 0 8 0 0 0 800 0 0 0 0",
    ].join("\n");
    expect(diskWrittenBytes(new Set(["vda"]), stats)).toBe(4000 * 512);
  });

  test("a file written, left dirty, then flushed shows as dirty memory and as a disk write", async () => {
    // Under the repository, not the OS temp dir: that may be a tmpfs, which never goes to a disk.
    const dir = mkdtempSync(join(import.meta.dir, "..", "..", ".writeback-test-"));
    const meter = writebackMeter(20);
    try {
      const fd = openSync(join(dir, "f"), "w");
      const chunk = new Uint8Array(1 << 20).fill(7);
      for (let i = 0; i < 32; i++) writeSync(fd, chunk);
      await Bun.sleep(100); // sampled while dirty
      fsyncSync(fd);
      closeSync(fd);
      await Bun.sleep(60);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const { dirty_peak_mb, disk_burst_mb } = meter();
    // Seen dirty (the kernel's default writeback waits); on a host that writes back early, seen going out at once.
    expect(dirty_peak_mb >= 16 || disk_burst_mb >= 4).toBe(true);
    expect(disk_burst_mb).toBeGreaterThan(0.5);
  });
});
