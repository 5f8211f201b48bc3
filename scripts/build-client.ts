/**
 * Builds the client SDK package (package.json `exports`: `ibis/client`, `ibis/client/e2ee`):
 *   dist/client/browser/sdk.js          minified ESM for browsers (the size budget: < 30 KB)
 *   dist/client/browser/e2ee/index.js   E2EE and device trust, minified (outside the budget)
 *   dist/client/bun/…                   the same two for Bun
 *   dist/client/types/…                 declarations (tsc -p tsconfig.client.json: DOM lib only, no Bun or Node types)
 * Prints each file's size (raw and gzip) and fails past the budget.
 * Usage: bun scripts/build-client.ts [--out <dir>]   (default dist/client)
 */
import { rmSync } from "node:fs";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";

export const ROOT = join(import.meta.dir, "..");
export const SDK_ENTRY = join(ROOT, "src/client/sdk.ts");
export const E2EE_ENTRY = join(ROOT, "src/client/e2ee/index.ts");
/** The minified browser bundle must stay below this (bytes). */
export const BROWSER_BUDGET = 30_000;

/** The browser build's constants: its JSON parse keeps the compact reviver (src/protocol/json.ts). */
const BROWSER_DEFINES = { IBIS_COMPACT_JSON: "true" };

/** The minified browser bundle in memory (the size the budget is about). */
export async function browserBundle(): Promise<string> {
  const r = await Bun.build({ entrypoints: [SDK_ENTRY], target: "browser", format: "esm", minify: true, define: BROWSER_DEFINES });
  if (!r.success) throw new AggregateError(r.logs, "browser build failed");
  return r.outputs[0]!.text();
}

async function build(out: string): Promise<void> {
  rmSync(out, { recursive: true, force: true });
  for (const [target, minify] of [["browser", true], ["bun", false]] as const) {
    const r = await Bun.build({
      entrypoints: [SDK_ENTRY, E2EE_ENTRY],
      target,
      format: "esm",
      minify,
      outdir: join(out, target),
      sourcemap: "linked",
      ...(target === "browser" ? { define: BROWSER_DEFINES } : {}),
    });
    if (!r.success) throw new AggregateError(r.logs, `${target} build failed`);
  }
  const tsc = Bun.spawnSync(["bunx", "tsc", "-p", "tsconfig.client.json", "--outDir", join(out, "types")], { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
  if (tsc.exitCode !== 0) throw new Error("declaration build failed");
}

if (import.meta.main) {
  const i = process.argv.indexOf("--out");
  const out = i > 0 ? join(process.cwd(), process.argv[i + 1]!) : join(ROOT, "dist/client");
  await build(out);
  let over = false;
  for (const [target, name] of [["browser", "sdk.js"], ["browser", "e2ee/index.js"], ["bun", "sdk.js"], ["bun", "e2ee/index.js"]]) {
    const file = join(out, target!, name!);
    const bytes = new Uint8Array(await Bun.file(file).arrayBuffer());
    const size = bytes.length;
    console.log(`${relative(ROOT, file)}: ${size} bytes, ${gzipSync(bytes).length} gzip`);
    if (target === "browser" && name === "sdk.js" && size >= BROWSER_BUDGET) {
      console.error(`browser bundle ${size} bytes ≥ budget ${BROWSER_BUDGET}`);
      over = true;
    }
  }
  process.exit(over ? 1 : 0);
}
