/** Tiny flag parser: `--name value`, `--name=value`, bare `--flag` is true. */
export type Args = Record<string, string | boolean>;

export function parseArgs(argv: string[] = process.argv.slice(2)): Args {
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
