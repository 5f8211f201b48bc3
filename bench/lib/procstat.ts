import { readdirSync, readFileSync } from "node:fs";

/** Linux clock ticks per second (USER_HZ); 100 on every mainstream kernel. */
const HZ = 100;

/** `pid` and all its descendants (an Ibis node with IBIS_WORKERS > 1 forks its workers). */
export function tree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      for (const tid of readdirSync(`/proc/${out[i]}/task`)) {
        const kids = readFileSync(`/proc/${out[i]}/task/${tid}/children`, "utf8").trim();
        if (kids) out.push(...kids.split(" ").map(Number));
      }
    } catch {
      // gone, or a kernel without /proc/<pid>/task/<tid>/children: count what we have
    }
  }
  return out;
}

/** utime + stime of a process tree, in ms, from /proc/<pid>/stat (0 when gone). */
export function cpuMs(pid: number): number {
  return cpuTimes(pid).cpu;
}

/**
 * stime alone of a process tree, in ms (0 when gone): the part of its CPU spent in the kernel on its behalf
 * (syscalls, page faults). Its share tells a syscall-bound server (the relays: most of their time) from one
 * bound by its own code, and why one machine slows the two unequally (bench/FINDINGS.md, tenth section).
 */
export function sysMs(pid: number): number {
  return cpuTimes(pid).sys;
}

/**
 * How long the main thread of each process of a tree was ready to run but waiting for a core, in ms
 * (`/proc/<pid>/schedstat`, its second field, the leader thread's run delay; 0 when gone). On a machine whose
 * cores the server shares with PostgreSQL and the load generator, a closed loop is bound by this as much as by
 * CPU: every socket write wakes a process that may take the writer's core (bench/FINDINGS.md, eleventh section).
 */
export function runQueueWaitMs(pid: number): number {
  let ns = 0;
  for (const p of tree(pid)) {
    try {
      ns += Number(readFileSync(`/proc/${p}/schedstat`, "utf8").split(" ")[1]);
    } catch {
      // gone meanwhile
    }
  }
  return ns / 1e6;
}

/** Both of a process tree, in ms, read in one pass (so the kernel's part is of the same reading). */
function cpuTimes(pid: number): { cpu: number; sys: number } {
  let cpu = 0;
  let sys = 0;
  for (const p of tree(pid)) {
    const f = statFields(p);
    if (!f) continue;
    const s = (Number(f[15 - 3]) * 1000) / HZ;
    cpu += (Number(f[14 - 3]) * 1000) / HZ + s;
    sys += s;
  }
  return { cpu, sys };
}

/** utime + stime, in ms, of every process whose command name is `comm` (PostgreSQL's backends, walwriter, …). */
export function cpuMsOfCommand(comm: string): number {
  let sum = 0;
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readFileSync(`/proc/${p}/comm`, "utf8").trim() === comm) sum += cpuMsOne(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return sum;
}

function cpuMsOne(pid: number): number {
  const f = statFields(pid);
  return f ? ((Number(f[14 - 3]) + Number(f[15 - 3])) * 1000) / HZ : 0; // utime + stime
}

/**
 * Context switches of the whole machine so far (`ctxt` in /proc/stat; 0 where
 * unreadable). Over a round, divided by the messages it carried: how often a
 * message made some process give up a core, which is dear on some guests
 * (bench/FINDINGS.md, 2026-11-28 third section).
 */
export function contextSwitches(): number {
  try {
    return Number(/^ctxt (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The machine's CPU time so far, all cores, in clock ticks (the `cpu` line of /proc/stat; zeros where unreadable). */
export interface MachineCpu {
  /** Every state: user, nice, system, idle, iowait, irq, softirq, steal. */
  total: number;
  idle: number;
  /** Idle with some task waiting on I/O (a commit's fsync, a read from the disk). */
  iowait: number;
}

export function machineCpu(): MachineCpu {
  try {
    const f = /^cpu +(.*)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1]?.split(/ +/).map(Number) ?? [];
    // guest and guest_nice (fields 9 and 10) are already counted in user and nice.
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    return { total, idle: f[3] ?? 0, iowait: f[4] ?? 0 };
  } catch {
    return { total: 0, idle: 0, iowait: 0 };
  }
}

/**
 * Between two readings: the share of all cores' time that was idle, and of it the share idle while some task
 * waited on I/O, each % of the whole (100 = every core idle all the time). A closed loop that leaves cores idle is
 * waiting for something, not bound by CPU: on PostgreSQL, its commits (bench/FINDINGS.md, fifteenth section).
 */
export function idleShares(a: MachineCpu, b: MachineCpu): { idle_pct: number; iowait_pct: number } {
  const total = b.total - a.total;
  if (total <= 0) return { idle_pct: 0, iowait_pct: 0 };
  const pct = (v: number) => Math.round((v / total) * 1000) / 10;
  return { idle_pct: pct(b.idle - a.idle + (b.iowait - a.iowait)), iowait_pct: pct(b.iowait - a.iowait) };
}

/**
 * Minor page faults of a process tree so far, from /proc/<pid>/stat (0 when
 * gone): each is a page of fresh memory touched, so their growth over a
 * round tells how much new memory the server took per message (4 KiB each).
 */
export function minorFaults(pid: number): number {
  return tree(pid).reduce((sum, p) => sum + Number(statFields(p)?.[10 - 3] ?? 0), 0);
}

/**
 * The fields of /proc/<pid>/stat from the third on (field n of proc(5) at
 * index n − 3), undefined when the process is gone.
 */
function statFields(pid: number): string[] | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: split after the last ')'.
    return s.slice(s.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** VmRSS of a process tree, in KiB, from /proc/<pid>/status (0 when gone). */
export function rssKb(pid: number): number {
  return tree(pid).reduce((sum, p) => sum + rssKbOne(p), 0);
}

function rssKbOne(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * CPU % (100 = one full core) of `pid` between start() and the returned stop(), the kernel's part of it, and how
 * long its main thread(s) waited for a core, % of the wall time (`runQueueWaitMs`).
 */
export function cpuMeter(pid: number): () => { cpu_pct: number; sys_pct: number; wait_pct: number; wall_ms: number } {
  const t0c = cpuTimes(pid);
  const t0w = runQueueWaitMs(pid);
  const t0 = performance.now();
  return () => {
    const wall = performance.now() - t0;
    const t1c = cpuTimes(pid);
    const pct = (ms: number) => Math.round((ms / wall) * 1000) / 10;
    return { cpu_pct: pct(t1c.cpu - t0c.cpu), sys_pct: pct(t1c.sys - t0c.sys), wait_pct: pct(runQueueWaitMs(pid) - t0w), wall_ms: Math.round(wall) };
  };
}

export interface Sample {
  t_ms: number;
  cpu_pct: number;
  rss_kb: number;
}

/** Samples CPU % and RSS of `pid` every `everyMs` until stopped. */
export function sampler(pid: number, everyMs: number): () => Sample[] {
  const out: Sample[] = [];
  const t0 = performance.now();
  let lastT = t0;
  let lastC = cpuMs(pid);
  const timer = setInterval(() => {
    const t = performance.now();
    const c = cpuMs(pid);
    out.push({ t_ms: Math.round(t - t0), cpu_pct: Math.round(((c - lastC) / (t - lastT)) * 1000) / 10, rss_kb: rssKb(pid) });
    lastT = t;
    lastC = c;
  }, everyMs);
  return () => {
    clearInterval(timer);
    return out;
  };
}

/** Page cache waiting to be written to disk or being written (`Dirty` + `Writeback` of /proc/meminfo), KiB. */
export function dirtyKb(meminfo = readFileSync("/proc/meminfo", "utf8")): number {
  let kb = 0;
  for (const line of meminfo.split("\n")) {
    const m = /^(Dirty|Writeback):\s+(\d+) kB/.exec(line);
    if (m) kb += Number(m[2]);
  }
  return kb;
}

/** Whole disks (/sys/block, without loop, RAM and device-mapper devices, which would count a write twice or none). */
export function physicalDisks(blocks: readonly string[] = readdirSync("/sys/block")): Set<string> {
  return new Set(blocks.filter((b) => !/^(loop|ram|zram|dm-|md)/.test(b)));
}

/** Bytes written so far to `disks` (/proc/diskstats: sectors written, field 10, are 512 B whatever the device's sector size). */
export function diskWrittenBytes(disks: ReadonlySet<string>, diskstats = readFileSync("/proc/diskstats", "utf8")): number {
  let bytes = 0;
  for (const line of diskstats.split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f.length > 9 && disks.has(f[2]!)) bytes += Number(f[9]) * 512;
  }
  return bytes;
}

/**
 * The kernel's writeback over a round, sampled every `everyMs`: the most page cache dirty at once and the most
 * written to disk within one interval. A closed loop on PostgreSQL leaves its relation files' pages dirty and the
 * kernel writes them back in bursts of 100 MB and more, which every commit's WAL flush then waits behind
 * (docs/operations.md, bench/FINDINGS.md ninth section): a round's latency tail beside a large burst is the host's.
 * Zeros where /proc cannot be read.
 */
export function writebackMeter(everyMs = 100): () => { dirty_peak_mb: number; disk_burst_mb: number } {
  let disks: Set<string>;
  try {
    disks = physicalDisks();
  } catch {
    return () => ({ dirty_peak_mb: 0, disk_burst_mb: 0 });
  }
  const read = () => {
    try {
      return { dirty: dirtyKb(), written: diskWrittenBytes(disks) };
    } catch {
      return { dirty: 0, written: 0 };
    }
  };
  let last = read();
  let peakKb = last.dirty;
  let burst = 0;
  const step = () => {
    const now = read();
    peakKb = Math.max(peakKb, now.dirty);
    burst = Math.max(burst, now.written - last.written);
    last = now;
  };
  const timer = setInterval(step, everyMs);
  return () => {
    clearInterval(timer);
    step();
    return { dirty_peak_mb: Math.round(peakKb / 102.4) / 10, disk_burst_mb: Math.round(burst / 104_857.6) / 10 };
  };
}
