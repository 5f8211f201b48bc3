import { expect, test } from "bun:test";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const root = join(import.meta.dir, "../..");

async function files(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.set(relative(dir, path), await readFile(path, "utf8"));
  }
  return out;
}

// CI guard: src/gen must be exactly what `bun run proto:generate` produces from proto/.
test("regenerating the protobuf code leaves src/gen unchanged", async () => {
  const tmp = await mkdtemp(join(tmpdir(), "ibis-gen-"));
  try {
    const proc = Bun.spawnSync([join(root, "node_modules/.bin/buf"), "generate", "-o", tmp], { cwd: root, stderr: "pipe" });
    expect(proc.stderr.toString()).toBe("");
    expect(proc.exitCode).toBe(0);
    const fresh = await files(join(tmp, "src/gen"));
    const committed = await files(join(root, "src/gen"));
    expect(fresh.size).toBeGreaterThan(0);
    expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [path, text] of fresh) expect(committed.get(path), path).toBe(text);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});
