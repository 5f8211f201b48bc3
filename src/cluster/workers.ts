/**
 * `bun run start --workers N` (or IBIS_WORKERS=N): the first process becomes
 * a supervisor that spawns N copies of the same entry (Bun.spawn, Bun's own
 * recipe; node:cluster is "not battle-tested" in Bun). Each worker is a full
 * Ibis node with its own node id, listening on the same port with
 * `reusePort` (Linux SO_REUSEPORT balances new connections), talking to the
 * others through the Redis bus. SIGTERM/SIGINT are forwarded; the supervisor
 * exits once every worker has.
 */
import type { Subprocess } from "bun";
import type { Config } from "../config/index.ts";
import { fields } from "../config/index.ts";
import type { Logger } from "../log.ts";
import { selfCommand } from "../runtime/self.ts";

/** Env var set on worker processes: their index, 0..N-1. */
export const WORKER_INDEX_ENV = "IBIS_WORKER_INDEX";

/** `--workers N` / `--workers=N` from argv, when given. */
export function workersArg(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--workers") return argv[i + 1] ?? "";
    if (a.startsWith("--workers=")) return a.slice("--workers=".length);
  }
  return undefined;
}

/** Why N workers cannot run with this configuration (empty: they can). Pure, table-tested. */
export function workerRefusals(config: Config): string[] {
  if (config.workers <= 1) return [];
  const n = `${fields.workers.env}=${config.workers}`;
  const out: string[] = [];
  if (!config.redisUrl) out.push(`${n} needs ${fields.redisUrl.env}: worker processes reach each other only through Redis.`);
  if (!/^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    out.push(`${n} needs ${fields.databaseUrl.env}=postgres://…: the embedded PGlite database belongs to one process.`);
  }
  if (config.port === 0) out.push(`${n} needs a fixed ${fields.port.env}: with 0 every worker would listen on a different port.`);
  if (config.nodeId !== undefined && config.nodeId + config.workers - 1 > 1023) {
    out.push(`${fields.nodeId.env}=${config.nodeId} leaves no room for ${config.workers} workers (worker i uses id + i, at most 1023).`);
  }
  return out;
}

const QUICK_EXIT_MS = 5_000;
const MAX_QUICK_EXITS = 3;

/** Runs N workers until a signal; restarts one that dies, gives up when they keep dying at start. Resolves with the exit code. */
export function superviseWorkers(n: number, log: Logger, stopTimeoutMs = 30_000): Promise<number> {
  const cmd = selfCommand();
  const children = new Map<number, Subprocess>();
  let stopping = false;
  let quickExits = 0;
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((r) => (resolveDone = r));
  let exitCode = 0;

  const spawn = (i: number) => {
    const started = Date.now();
    const child = Bun.spawn(cmd, {
      env: { ...process.env, [fields.workers.env]: String(n), [WORKER_INDEX_ENV]: String(i) },
      stdio: ["ignore", "inherit", "inherit"],
      onExit: (_p, code, signal) => {
        children.delete(i);
        if (stopping) {
          if (code) exitCode = code;
          if (children.size === 0) resolveDone(exitCode);
          return;
        }
        log.error("worker exited", { worker: i, code, signal });
        if (Date.now() - started < QUICK_EXIT_MS && ++quickExits >= MAX_QUICK_EXITS) {
          log.error("workers keep dying at start; stopping");
          exitCode = 1;
          stop("SIGTERM");
          if (children.size === 0) resolveDone(exitCode);
          return;
        }
        setTimeout(() => !stopping && spawn(i), 1000);
      },
    });
    children.set(i, child);
  };

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping workers", { signal, workers: children.size });
    for (const c of children.values()) c.kill(signal);
    // A worker stuck in shutdown must not keep the supervisor (and the port) forever.
    setTimeout(() => {
      for (const c of children.values()) c.kill("SIGKILL");
    }, stopTimeoutMs).unref();
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  for (let i = 0; i < n; i++) spawn(i);
  log.info("workers started", { workers: n, pid: process.pid });
  return done;
}
