import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkTree } from "./ibis.ts";
import { ROOT } from "./proc.ts";

describe("checkTree (c2c --compare-tree)", () => {
  test("this checkout is a tree a node runs from", () => {
    expect(checkTree(ROOT)).toBe(ROOT);
  });

  test("a tree without its node_modules or src/main.ts is refused, naming what is missing", () => {
    const dir = mkdtempSync(join(tmpdir(), "ibis-tree-"));
    try {
      expect(() => checkTree(dir)).toThrow(join(dir, "src/main.ts"));
      mkdirSync(join(dir, "src"));
      writeFileSync(join(dir, "src/main.ts"), "");
      expect(() => checkTree(dir)).toThrow(join(dir, "node_modules"));
      mkdirSync(join(dir, "node_modules"));
      expect(checkTree(dir)).toBe(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
