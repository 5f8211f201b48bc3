import { mkdirSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { machine, noiseSince, type Noise, type NoiseCounters } from "./machine.ts";
import { pgRoundTrip, pgVia, type PgRoundTrip } from "./pg.ts";
import { ROOT } from "./proc.ts";
import type { Chart } from "./svg.ts";

/**
 * Where results, RESULTS.md and charts go: bench/ by default; BENCH_OUT=<dir>
 * sends them elsewhere (CI's smoke run leaves the committed results alone).
 */
export const OUT_DIR = process.env.BENCH_OUT ? resolve(process.env.BENCH_OUT) : resolve(ROOT, "bench");
export const RESULTS_DIR = resolve(OUT_DIR, "results");
export const REPORT_PATH = resolve(OUT_DIR, "RESULTS.md");

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
  /** 1-min load average when the scenario started (absent in results written before it was recorded). */
  load_at_start?: number;
  /** What the host took during the run: CPU steal and I/O stall shares (absent in results written before it was recorded). */
  noise?: Noise;
  machine: ReturnType<typeof machine>;
  /** How the bench reaches PostgreSQL, for the scenarios that use it (absent in results written before it was recorded; those went over TCP). */
  pg_via?: "unix socket" | "tcp";
  /** PostgreSQL's statement and durable-commit round trips, measured before the load (runs with a PostgreSQL node only). */
  pg_round_trip?: PgRoundTrip;
}

/**
 * Writes bench/results/<scenario>-<date>.json. Runs are marked non-representative
 * unless `--representative` was passed (quiet machine, default sizes or larger).
 */
export function writeResult(
  scenario: string,
  body: ResultBody,
  opts: { smoke: boolean; representative: boolean; loadAtStart: number; noiseAtStart?: NoiseCounters },
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
  // machine() reads the load average now, at the end of the run; the 1-min load when the run began is kept beside it.
  const file: ResultFile = {
    scenario,
    date,
    representative,
    quality,
    load_at_start: Math.round(opts.loadAtStart * 100) / 100,
    ...(opts.noiseAtStart ? { noise: noiseSince(opts.noiseAtStart) } : {}),
    machine: m,
    pg_via: pgVia(),
    ...(pgRoundTrip() ? { pg_round_trip: pgRoundTrip() } : {}),
    ...body,
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = resolve(RESULTS_DIR, `${scenario}-${date.replace(/[:.]/g, "-")}.json`);
  writeFileSync(path, JSON.stringify(file, null, 2) + "\n");
  return path;
}
