/**
 * The SDK is bundled for browsers, so nothing it reaches may be server code.
 * Walks imports transitively from every module under src/client (and
 * src/model, the bottom floor): runtime imports with Bun.Transpiler's
 * scanImports, type-only ones (which scanImports drops, but a declaration
 * build follows) with a `from "…"` scan.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const transpiler = new Bun.Transpiler({ loader: "ts" });
const TYPE_FROM = /^\s*(?:import|export)\s+type\b[^;]*?\bfrom\s*["']([^"']+)["']/gm;
const TYPE_NAMED = /^\s*import\s*\{[^}]*\btype\b[^}]*\}\s*from\s*["']([^"']+)["']/gm;

function specifiers(file: string): string[] {
  const code = readFileSync(file, "utf8");
  let out: string[];
  try {
    out = transpiler.scanImports(code).map((i) => i.path);
  } catch (e) {
    throw new Error(`cannot scan the imports of ${relative(ROOT, file)}`, { cause: e });
  }
  for (const re of [TYPE_FROM, TYPE_NAMED]) for (const m of code.matchAll(re)) out.push(m[1]!);
  return out;
}

/** Every module reachable from `entries`: repo paths for relative imports, bare specifiers as they are. */
export function reachable(entries: readonly string[]): { files: Set<string>; bare: Set<string>; edges: Map<string, string> } {
  const files = new Set<string>();
  const bare = new Set<string>();
  const edges = new Map<string, string>(); // module → the module that first imported it
  const stack = entries.map((e) => resolve(ROOT, e));
  for (const e of stack) files.add(relative(ROOT, e));
  while (stack.length > 0) {
    const file = stack.pop()!;
    for (const spec of specifiers(file)) {
      if (!spec.startsWith(".")) {
        bare.add(spec);
        edges.set(spec, relative(ROOT, file));
        continue;
      }
      const target = resolve(dirname(file), spec);
      const rel = relative(ROOT, target);
      if (files.has(rel)) continue;
      files.add(rel);
      edges.set(rel, relative(ROOT, file));
      if (/\.tsx?$/.test(target)) stack.push(target); // assets (wasm, sql) are leaves

    }
  }
  return { files, bare, edges };
}

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(dir, f));
}

/** The import chain that led to `mod`, for a readable failure. */
function chain(edges: Map<string, string>, mod: string): string {
  const path = [mod];
  for (let at = edges.get(mod); at !== undefined; at = edges.get(at)) path.unshift(at);
  return path.join(" → ");
}

const SERVER = /^src\/(ws|http|delivery|db|bus|cluster|domain|config)\/|^src\/(main|node|services|log|secrets)\.ts$/;
// What a browser bundle may reach besides the SDK itself.
const SDK_FLOOR = /^src\/(client|model|protocol|gen)\//;
const RUNTIME_ONLY = /^(bun|bun:.*|node:.*)$/;

describe("SDK import graph", () => {
  const sdk = reachable(tsFiles("src/client"));

  test("nothing reachable from src/client is server code", () => {
    const bad = [...sdk.files].filter((f) => SERVER.test(f) || !SDK_FLOOR.test(f)).map((f) => chain(sdk.edges, f));
    expect(bad).toEqual([]);
  });

  test("nothing reachable from src/client needs Bun or Node built-ins", () => {
    const bad = [...sdk.bare].filter((s) => RUNTIME_ONLY.test(s)).map((s) => chain(sdk.edges, s));
    expect(bad).toEqual([]);
  });

  test("the chat page (web/) reaches the server only through the published SDK", () => {
    const page = reachable(["web/app.ts"]);
    const direct = new Set(specifiers(resolve(ROOT, "web/app.ts")).filter((s) => s.startsWith(".")));
    expect([...direct]).toEqual(["../src/client/sdk.ts"]);
    expect([...page.files].filter((f) => f !== "web/app.ts" && !SDK_FLOOR.test(f)).map((f) => chain(page.edges, f))).toEqual([]);
    expect(page.files.has("src/client/connection.ts")).toBe(false); // no protobuf encoder in the page bundle
  });

  test("src/model imports nothing outside itself", () => {
    const model = reachable(tsFiles("src/model"));
    expect([...model.files].filter((f) => !f.startsWith("src/model/"))).toEqual([]);
    expect([...model.bare]).toEqual([]);
  });

  test("the walk sees server imports, type-only ones included (the check can fail)", () => {
    const ws = reachable(["src/ws/hub.ts"]); // imports delivery/ports.ts as `import type` only
    expect(ws.files.has("src/delivery/ports.ts")).toBe(true);
    expect(reachable(["src/delivery/engine.ts"]).files.has("src/model/close-codes.ts")).toBe(true);
  });
});
