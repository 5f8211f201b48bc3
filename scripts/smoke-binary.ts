/**
 * Builds dist/ibis and checks that it starts on embedded PGlite (assets and
 * migrations inside the binary): DATA_DIR in a temporary directory, /health
 * must answer ok within 60 s, and /app must serve the chat page and its
 * script. Run from any working directory other than the repository too: the
 * binary must not need node_modules or ./drizzle.
 * Usage: bun scripts/smoke-binary.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const build = Bun.spawnSync(["bun", "run", "build"], { cwd: root, stdout: "inherit", stderr: "inherit" });
if (build.exitCode !== 0) process.exit(build.exitCode ?? 1);

const dir = mkdtempSync(join(tmpdir(), "ibis-smoke-"));
const port = 20_000 + Math.floor(Math.random() * 20_000);
const proc = Bun.spawn([join(root, "dist/ibis")], {
  cwd: dir,
  env: { PATH: process.env.PATH ?? "", DATA_DIR: join(dir, "data"), PORT: String(port), HOST: "127.0.0.1" },
  stdout: "inherit",
  stderr: "inherit",
});
let ok = false;
try {
  for (let i = 0; i < 120 && proc.exitCode === null; i++) {
    await Bun.sleep(500);
    const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
    if (res?.ok) {
      console.log(await res.text());
      ok = await chatPageServed(`http://127.0.0.1:${port}`);
      break;
    }
  }
} finally {
  proc.kill();
  await proc.exited;
  rmSync(dir, { recursive: true, force: true });
}
console.log(ok ? "binary smoke: ok" : "binary smoke: FAILED");

/** The chat page and its script come out of the binary (docs/client.md). */
async function chatPageServed(base: string): Promise<boolean> {
  const page = await fetch(`${base}/app`);
  const script = (await page.text()).match(/<script[^>]+src="([^"]+)"/)?.[1];
  const js = script ? await fetch(new URL(script, base)) : undefined;
  const size = js?.ok ? (await js.arrayBuffer()).byteLength : 0;
  console.log(`/app: ${page.status}, script ${script ?? "missing"}: ${size} bytes`);
  return page.ok && size > 0;
}
process.exit(ok ? 0 : 1);
