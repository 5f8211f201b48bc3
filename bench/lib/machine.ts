import { readFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, release, totalmem } from "node:os";

export interface Machine {
  nproc: number;
  cpu_model: string;
  mem_total_mb: number;
  kernel: string;
  bun: string;
  node: string | null;
  loadavg_at_start: number[];
  open_files_limit: number | null;
  /** The kernel's writeback of dirty pages (undefined in results written before it was recorded). */
  writeback?: Writeback;
}

/**
 * How the kernel writes dirty pages back (/proc/sys/vm, null where absent).
 * PostgreSQL's backends leave the relation files they extend and evict dirty
 * in the page cache; with the defaults (background at 10 % of memory, pages
 * older than 30 s written every 5 s) they are flushed in bursts of 100+ MB
 * that commits' WAL flushes queue behind: a C2C latency tail of tens of ms
 * that no server code causes (bench/FINDINGS.md 2026-11-28 ninth,
 * docs/operations.md). A run's tails are read with these beside them.
 */
export interface Writeback {
  dirty_background_bytes: number | null;
  dirty_background_ratio: number | null;
  dirty_expire_centisecs: number | null;
  dirty_writeback_centisecs: number | null;
}

function vm(name: string): number | null {
  const text = read(`/proc/sys/vm/${name}`);
  const n = text === undefined ? NaN : Number(text.trim());
  return Number.isFinite(n) ? n : null;
}

export function writeback(): Writeback {
  return {
    dirty_background_bytes: vm("dirty_background_bytes"),
    dirty_background_ratio: vm("dirty_background_ratio"),
    dirty_expire_centisecs: vm("dirty_expire_centisecs"),
    dirty_writeback_centisecs: vm("dirty_writeback_centisecs"),
  };
}

/** The report's words for a run's writeback settings: "" for the kernel's defaults or when unknown. */
export function writebackText(w: Writeback | undefined): string {
  if (!w) return "";
  const background =
    w.dirty_background_bytes ? `${Math.round(w.dirty_background_bytes / 2 ** 20)} MiB` : w.dirty_background_ratio !== null && w.dirty_background_ratio !== 10 ? `${w.dirty_background_ratio} %` : undefined;
  const expire = w.dirty_expire_centisecs !== null && w.dirty_expire_centisecs !== 3000 ? `${w.dirty_expire_centisecs / 100} s` : undefined;
  const sweep = w.dirty_writeback_centisecs !== null && w.dirty_writeback_centisecs !== 500 ? (w.dirty_writeback_centisecs === 0 ? "off" : `every ${w.dirty_writeback_centisecs / 100} s`) : undefined;
  const parts = [background && `background writeback from ${background}`, expire && `dirty pages written after ${expire}`, sweep && `periodic sweep ${sweep}`].filter(Boolean);
  return parts.length ? ` · kernel writeback tuned: ${parts.join(", ")}` : "";
}

function nodeVersion(): string | null {
  try {
    const r = Bun.spawnSync(["node", "--version"]);
    return r.success ? r.stdout.toString().trim() : null;
  } catch {
    return null;
  }
}

export function openFilesLimit(): number | null {
  try {
    const r = Bun.spawnSync(["sh", "-c", "ulimit -n"]);
    const n = Number(r.stdout.toString().trim());
    return Number.isFinite(n) ? n : null;
  } catch {
    return null;
  }
}

export function machine(): Machine {
  return {
    nproc: availableParallelism(),
    cpu_model: cpus()[0]?.model ?? "unknown",
    mem_total_mb: Math.round(totalmem() / 2 ** 20),
    kernel: release(),
    bun: Bun.version,
    node: nodeVersion(),
    loadavg_at_start: loadavg().map((x) => Math.round(x * 100) / 100),
    open_files_limit: openFilesLimit(),
    writeback: writeback(),
  };
}

/**
 * What the host takes from this machine, as counters: CPU time stolen by the
 * hypervisor (/proc/stat) and time in which some task stalled on I/O (Linux
 * pressure stall information). On the kinds seen here the host pages out
 * memory it finds idle (a DAMON `pageout` scheme), code pages included, so a
 * run's tails include I/O stalls no server causes (bench/FINDINGS.md).
 */
export interface NoiseCounters {
  readonly at: number;
  readonly cpuTicks: number;
  readonly stealTicks: number;
  /** Microseconds in which some task waited for I/O; undefined without PSI. */
  readonly ioSomeUs: number | undefined;
}

export interface Noise {
  /** Share of all CPU time the hypervisor stole during the run, %. */
  cpu_steal_pct: number | null;
  /** Share of the run's wall time in which some task stalled on I/O, %. */
  io_stalled_pct: number | null;
}

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

export function noiseCounters(): NoiseCounters {
  const cpu = read("/proc/stat")?.split("\n")[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  const io = /^some .*total=(\d+)/m.exec(read("/proc/pressure/io") ?? "")?.[1];
  return {
    at: performance.now(),
    cpuTicks: cpu.slice(0, 8).reduce((a, b) => a + b, 0),
    stealTicks: cpu[7] ?? 0,
    ioSomeUs: io === undefined ? undefined : Number(io),
  };
}

export function noiseSince(start: NoiseCounters): Noise {
  const end = noiseCounters();
  const ticks = end.cpuTicks - start.cpuTicks;
  const wallUs = (end.at - start.at) * 1000;
  const pct = (x: number) => Math.round(x * 1000) / 10;
  return {
    cpu_steal_pct: ticks > 0 ? pct((end.stealTicks - start.stealTicks) / ticks) : null,
    io_stalled_pct: start.ioSomeUs !== undefined && end.ioSomeUs !== undefined && wallUs > 0 ? pct((end.ioSomeUs - start.ioSomeUs) / wallUs) : null,
  };
}
