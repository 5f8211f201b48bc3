/**
 * The SDK as a package: the minified browser bundle stays under its budget and
 * needs no Bun or Node globals; `bun run build:client` writes the browser and
 * Bun builds and the declarations; a consumer outside the repository imports
 * `ibis/client` and `ibis/client/e2ee` through the package.json `exports` map, type-checks against
 * the declarations with the DOM lib only, and runs the Bun build.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BROWSER_BUDGET, browserBundle, ROOT } from "../../scripts/build-client.ts";

describe("client SDK package", () => {
  test(`the minified browser bundle is under ${BROWSER_BUDGET} bytes and uses browser globals only`, async () => {
    const js = await browserBundle();
    console.log(`browser SDK bundle: ${js.length} bytes minified, ${Bun.gzipSync(js).length} gzip`);
    expect(js.length).toBeLessThan(BROWSER_BUDGET);
    // (protobuf-es feature-detects `process` and `globalThis.Bun` behind typeof checks: harmless in a browser.)
    expect(js).not.toMatch(/\bBuffer\b|\brequire\(|\bnode:/);
  });

  test("build:client output is importable as ibis/client (types and the Bun build)", async () => {
    const build = Bun.spawnSync(["bun", "scripts/build-client.ts"], { cwd: ROOT, stderr: "pipe", stdout: "pipe" });
    expect(build.stderr.toString()).toBe("");
    expect(build.exitCode).toBe(0);

    const dir = mkdtempSync(join(tmpdir(), "ibis-consumer-"));
    try {
      mkdirSync(join(dir, "node_modules"));
      symlinkSync(ROOT, join(dir, "node_modules/ibis"));
      writeFileSync(
        join(dir, "main.ts"),
        `import { IbisClient, CloseCode, backoffBase, type StateChange } from "ibis/client";
import { encryptForDevices, type EncryptedParts } from "ibis/client/e2ee";
const c = new IbisClient({ url: "http://127.0.0.1:9", deviceId: "d" });
const s: StateChange = c.state;
const e: ((...a: Parameters<typeof encryptForDevices>) => Promise<EncryptedParts>) = encryptForDevices;
console.log(JSON.stringify([typeof IbisClient, CloseCode.Replaced, backoffBase(3), s.state, typeof e]));
`,
      );
      writeFileSync(
        join(dir, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: { target: "ES2022", module: "ESNext", moduleResolution: "bundler", lib: ["ESNext", "DOM"], types: [], strict: true, noEmit: true },
          files: ["main.ts"],
        }),
      );
      const tsc = Bun.spawnSync([join(ROOT, "node_modules/.bin/tsc"), "-p", dir], { cwd: dir });
      expect(tsc.stdout.toString()).toBe("");
      const run = Bun.spawnSync(["bun", "main.ts"], { cwd: dir });
      expect(JSON.parse(run.stdout.toString())).toEqual(["function", 4103, 5000, "stopped", "function"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
