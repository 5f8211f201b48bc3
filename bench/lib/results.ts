import { mkdirSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { machine } from "./machine.ts";
import { ROOT } from "./proc.ts";
import type { Chart } from "./svg.ts";

export const RESULTS_DIR = resolve(ROOT, "bench/results");

/** A table as RESULTS.md shows it. */
export interface Table {
  title: string;
  columns: string[];
  rows: (string | number)[][];
}

export interface ResultBody {
  params: Record<string, unknown>;
  /** Every round of every subject, untouched. */
  raw: unknown;
  ratios?: unknown;
  tables: Table[];
  charts?: Chart[];
  /** Things the reader must know (skipped Ibis side, caveats). */
  notes?: string[];
}

export interface ResultFile extends ResultBody {
  scenario: string;
  date: string;
  /** false for smoke runs and runs on a shared machine: not to be quoted. */
  representative: boolean;
  quality: string;
  machine: ReturnType<typeof machine>;
}

/**
 * Writes bench/results/<scenario>-<date>.json. Runs are marked non-representative
 * unless `--representative` was passed (quiet machine, default sizes or larger).
 */
export function writeResult(
  scenario: string,
  body: ResultBody,
  opts: { smoke: boolean; representative: boolean; loadAtStart: number },
): string {
  const date = new Date().toISOString();
  const m = machine();
  // A box already busy before the run (load average over half its cores) cannot produce a quotable result.
  const busy = opts.loadAtStart > m.nproc / 2;
  const representative = opts.representative && !opts.smoke && !busy;
  const quality = opts.smoke
    ? "smoke, shared machine"
    : representative
      ? "representative"
      : busy
        ? `busy machine (load ${opts.loadAtStart.toFixed(2)} at start), not representative`
        : "shared machine, not representative";
  const file: ResultFile = { scenario, date, representative, quality, machine: m, ...body };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = resolve(RESULTS_DIR, `${scenario}-${date.replace(/[:.]/g, "-")}.json`);
  writeFileSync(path, JSON.stringify(file, null, 2) + "\n");
  return path;
}
