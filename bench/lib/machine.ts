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
  };
}
