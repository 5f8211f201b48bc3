import { selfCommand } from "./self.ts";

/**
 * Bun's allocator (its mimalloc) returns the free holes inside its pages to the kernel as they appear
 * (`MIMALLOC_PURGE_HOLES`, on by default): thousands of small `madvise(MADV_DONTNEED)` a second under load, mostly
 * from the JIT's threads, and page faults when the memory is used again. In a C2C run that was a third of
 * the embedded node's CPU per message (bench/FINDINGS.md 2026-11-29, thirteenth). Whole free spans still go back
 * after the allocator's delay; the holes are kept for reuse, which costs memory (the same section, docs/operations.md).
 *
 * mimalloc reads its options from the environment once, when the process starts, and Bun exports no call to set
 * them: the entry point starts itself again (`execve`: same pid, same file descriptors, same arguments) with the
 * variable set. An operator who sets the variable, to any value, gets it as set and no second start.
 */
export const ALLOCATOR_DEFAULTS: Readonly<Record<string, string>> = { MIMALLOC_PURGE_HOLES: "0" };

/** The variables still to set: those the environment lacks (an operator's own value is kept). */
export function missingDefaults(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(ALLOCATOR_DEFAULTS)) if (env[k] === undefined) out[k] = v;
  return out;
}

/** Starts the process again with the allocator's defaults when any is missing; returns only when none is. */
export function withAllocatorDefaults(): void {
  const missing = missingDefaults(process.env);
  if (!Object.keys(missing).length || typeof process.execve !== "function") return;
  try {
    process.execve(process.execPath, selfCommand(), { ...process.env, ...missing });
  } catch {
    // No execve here (Windows): run on the allocator's own defaults.
  }
}
