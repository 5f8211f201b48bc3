/**
 * The processes tests start (Ibis nodes, worker supervisors). `bun test`
 * neither waits for nor kills them when it exits, and one left running keeps
 * the output pipe of whoever ran the suite open: a CI run once waited on one
 * until its own time limit. Every spawn goes through `tracked`; the run's last
 * hook (preload.ts) kills what is still running, its descendants included,
 * and names it.
 */
import type { Subprocess } from "bun";
import { readFileSync } from "node:fs";
import { tree } from "../../bench/lib/procstat.ts";

// On globalThis: the preload and the test files must see one set whatever their module instances.
const KEY = Symbol.for("ibis.test.children");
const running: Set<Subprocess> = ((globalThis as Record<symbol, unknown>)[KEY] as Set<Subprocess> | undefined) ?? new Set();
(globalThis as Record<symbol, unknown>)[KEY] = running;

/** Registers `proc` until it exits. */
export function tracked<T extends Subprocess>(proc: T): T {
  running.add(proc);
  void proc.exited.finally(() => running.delete(proc));
  return proc;
}

/** Every process below `pid` (children, theirs, …), from /proc (Linux); empty elsewhere. */
export const descendants = (pid: number): number[] => tree(pid).slice(1);

/** Whether a process with this pid still runs (a zombie waiting to be reaped does not: an orphan's reaper may never come). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    try {
      process.kill(pid, 0); // no /proc: existence only
      return true;
    } catch {
      return false;
    }
  }
}

/** A NUL-separated /proc file of a process, split as it is (its environment or its command line; Linux). */
export const procList = (pid: number, file: "environ" | "cmdline"): string[] => readFileSync(`/proc/${pid}/${file}`, "utf8").split("\0");

/** SIGKILLs every tracked process (or those given) still running and its descendants; returns what it killed. */
export function killLeftovers(procs: Iterable<Subprocess> = running): string[] {
  const killed: string[] = [];
  for (const proc of procs) {
    for (const pid of tree(proc.pid)) {
      let cmd = "";
      try {
        cmd = procList(pid, "cmdline").join(" ").trim();
      } catch {
        // not Linux, or gone
      }
      try {
        process.kill(pid, "SIGKILL");
        killed.push(`${pid} ${cmd}`.trim());
      } catch {
        // already gone
      }
    }
  }
  for (const proc of procs) running.delete(proc);
  return killed;
}
