/** Tiny flag parser: `--name value`, `--name=value`, bare `--flag` is true. */
import { readFileSync } from "node:fs";

export type Args = Record<string, string | boolean>;

/** The flags the scenarios share (bench/lib/scenario.ts), printed under each script's own usage. */
const COMMON_FLAGS = `Common scenario flags: --smoke, --rounds N, --duration MS, --warmup MS, --ibis off|memory|postgres|both,
--representative (quiet machine: the result is quotable), --no-report (RESULTS.md not rebuilt; the result file is
still written). --help prints this without running.`;

/** The leading doc comment of a bench script (its description and usage lines), as plain text. */
export function usageOf(source: string): string {
  const m = /^\s*\/\*\*([\s\S]*?)\*\//.exec(source);
  return m ? m[1]!.split("\n").map((l) => l.replace(/^\s*\* ?/, "")).join("\n").trim() : "";
}

export function parseArgs(argv: string[] = process.argv.slice(2)): Args {
  // A bench asked for help prints its usage instead of running (a run takes minutes and writes a result file).
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(`${usageOf(readFileSync(process.argv[1]!, "utf8")) || "no usage text"}\n\n${COMMON_FLAGS}`);
    process.exit(0);
  }
  const out: Args = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith("--")) continue;
    const eq = a.indexOf("=");
    if (eq > 0) out[a.slice(2, eq)] = a.slice(eq + 1);
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith("--")) out[a.slice(2)] = argv[++i]!;
    else out[a.slice(2)] = true;
  }
  return out;
}

export const num = (args: Args, name: string, fallback: number): number => {
  const v = args[name];
  if (v === undefined || v === true) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`--${name} wants a number, got ${String(v)}`);
  return n;
};

export const nums = (args: Args, name: string, fallback: number[]): number[] => {
  const v = args[name];
  return typeof v === "string" ? v.split(",").map(Number) : fallback;
};

export const str = (args: Args, name: string, fallback: string): string => {
  const v = args[name];
  return typeof v === "string" ? v : fallback;
};

export const bool = (args: Args, name: string): boolean => args[name] === true || args[name] === "1" || args[name] === "true";

/** "K=V,K2=V2" as variables (a value may hold "="; an item without one is ignored): BENCH_IBIS_ENV and c2c --compare. */
export const envList = (spec: string): Record<string, string> =>
  Object.fromEntries(spec.split(",").filter((kv) => kv.includes("=")).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
