/**
 * What every scenario script shares: common flags, starting baselines,
 * stopping everything on the way out, writing the result and the report.
 *
 * Common flags: --smoke (smallest size, for CI; speed never asserted),
 * --rounds N, --ibis off|memory|postgres|both, --representative (quiet
 * machine: mark the result quotable), --no-report.
 */
import { buildReport } from "../report.ts";
import { bool, parseArgs, str, type Args } from "./args.ts";
import { startServer, type RunningServer } from "./proc.ts";
import { num } from "./args.ts";
import { REPORT_PATH, writeResult, type ResultBody } from "./results.ts";
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { noiseCounters, type NoiseCounters } from "./machine.ts";
import { pgRoundTrip } from "./pg.ts";

export interface Common {
  /** 1-minute load average before anything started (the box's own noise). */
  loadAtStart: number;
  /** Host noise counters when the scenario started (steal, I/O stalls over the run). */
  noiseAtStart: NoiseCounters;
  args: Args;
  smoke: boolean;
  rounds: number;
  ibis: string;
  notes: string[];
}

export function common(defaultRounds = 3): Common {
  const args = parseArgs();
  const smoke = bool(args, "smoke");
  return { loadAtStart: loadavg()[0] ?? 0, noiseAtStart: noiseCounters(), args, smoke, rounds: num(args, "rounds", smoke ? 2 : defaultRounds), ibis: str(args, "ibis", "auto"), notes: [] };
}

/** Measured window and warm-up of one round (`--duration`, `--warmup`, ms). */
export const timing = (c: Common) => ({
  durationMs: num(c.args, "duration", c.smoke ? 500 : 2000),
  warmupMs: num(c.args, "warmup", c.smoke ? 100 : 300),
});

/** A server the scenario loads, and which wire protocol its generators speak. */
export interface ProtoTarget {
  name: string;
  kind: "baseline" | "ibis";
  server: RunningServer;
  proto: "raw" | "ibis";
}

/** A raw baseline (bench/baselines/<file>) as its own process; `.mjs` runs under node. */
export const baseline = (name: string, file: string): Promise<RunningServer> =>
  startServer({ name, cmd: [file.endsWith(".mjs") ? "node" : "bun", `bench/baselines/${file}`] });

/** The Node `ws` peer, or a note when Node (or `ws`) is not installed: a peer is optional. */
export async function nodePeer(c: Common, cleanup: Cleanup): Promise<RunningServer | undefined> {
  try {
    return cleanup.add(await baseline("node-ws-echo", "node-ws-echo.mjs"));
  } catch (e) {
    c.notes.push(`node-ws-echo peer skipped: ${(e as Error).message.split("\n")[0]}`);
    return undefined;
  }
}

/** Stops everything registered, whatever happened. */
export class Cleanup {
  private readonly fns: (() => Promise<void>)[] = [];
  add<T extends { stop(): Promise<void> }>(x: T): T {
    this.fns.push(() => x.stop());
    return x;
  }
  async run(): Promise<void> {
    for (const f of this.fns.reverse()) await f().catch(() => {});
  }
}

export function finish(scenario: string, c: Common, body: ResultBody): void {
  const rt = pgRoundTrip();
  if (rt) {
    c.notes.push(
      `PostgreSQL before the load: a statement's round trip ${rt.query_us} µs, a one-row insert's commit ${rt.commit_us} µs ` +
        `(medians of ${rt.samples}, synchronous_commit ${rt.synchronous_commit}; the difference is about the WAL flush every C2C batch waits for)`,
    );
  }
  if (c.notes.length) body.notes = [...(body.notes ?? []), ...c.notes];
  const path = writeResult(scenario, body, { smoke: c.smoke, representative: bool(c.args, "representative"), loadAtStart: c.loadAtStart, noiseAtStart: c.noiseAtStart });
  console.error(`wrote ${path}`);
  if (!bool(c.args, "no-report")) writeFileSync(REPORT_PATH, buildReport());
  for (const t of body.tables) {
    console.log(`\n${t.title}\n${t.columns.join("\t")}`);
    for (const r of t.rows) console.log(r.join("\t"));
  }
}

/** Runs `main` with a cleanup list, exiting non-zero on failure (never on speed). */
export async function scenarioMain(main: (cleanup: Cleanup) => Promise<void>): Promise<void> {
  const cleanup = new Cleanup();
  const stop = async (code: number) => {
    await cleanup.run();
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(130));
  process.on("SIGTERM", () => void stop(143));
  try {
    await main(cleanup);
    await stop(0);
  } catch (e) {
    console.error(e);
    await stop(1);
  }
}
