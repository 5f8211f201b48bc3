/**
 * The command line that runs this same entry again, as this process was started: Bun's own flags (`--smol`,
 * `--preload`, …) and the script under plain `bun`; a compiled binary's argv[1] is its embedded entry, which the
 * binary supplies itself. Used to start workers (src/cluster/workers.ts) and to start again with the allocator's
 * settings (src/runtime/allocator.ts).
 */
export function selfCommand(
  p: { execPath: string; execArgv: readonly string[]; argv: readonly string[] } = process,
): string[] {
  const script = p.argv[1];
  const compiled = !script || script.startsWith("/$bunfs/") || script.startsWith("B:/~BUN/");
  return compiled ? [p.execPath, ...p.argv.slice(2)] : [p.execPath, ...p.execArgv, ...p.argv.slice(1)];
}
