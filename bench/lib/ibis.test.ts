import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ALLOCATOR_DEFAULTS } from "../../src/runtime/allocator.ts";
import { checkTree, nodeCommand, profiledEnv } from "./ibis.ts";
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

describe("nodeCommand (BENCH_IBIS_PREFIX, BENCH_IBIS_PROFILE)", () => {
  test.each([
    ["unset", {}, ["bun", "src/main.ts"]],
    ["an empty prefix is no prefix", { BENCH_IBIS_PREFIX: "" }, ["bun", "src/main.ts"]],
    ["a blank prefix is no prefix", { BENCH_IBIS_PREFIX: "  \t " }, ["bun", "src/main.ts"]],
    ["a prefix's words, spaces trimmed", { BENCH_IBIS_PREFIX: " chrt  -b 0 " }, ["chrt", "-b", "0", "bun", "src/main.ts"]],
    ["a profile", { BENCH_IBIS_PROFILE: "/tmp/p" }, ["bun", "--cpu-prof", "--cpu-prof-dir", "/tmp/p", "src/main.ts"]],
    ["an empty profile is none", { BENCH_IBIS_PROFILE: "" }, ["bun", "src/main.ts"]],
    [
      "both",
      { BENCH_IBIS_PREFIX: "nice -n 5", BENCH_IBIS_PROFILE: "/tmp/p" },
      ["nice", "-n", "5", "bun", "--cpu-prof", "--cpu-prof-dir", "/tmp/p", "src/main.ts"],
    ],
  ] as const)("%s", (_name, env, cmd) => {
    expect(nodeCommand(env)).toEqual([...cmd]);
  });
});

describe("profiledEnv", () => {
  test("a profiled node gets the allocator's defaults (no second start under the profiler); others nothing", () => {
    expect(profiledEnv({ BENCH_IBIS_PROFILE: "/tmp/p" })).toEqual({ ...ALLOCATOR_DEFAULTS });
    expect(Object.keys(ALLOCATOR_DEFAULTS)).toContain("MIMALLOC_PURGE_HOLES");
    expect(profiledEnv({})).toEqual({});
    expect(profiledEnv({ BENCH_IBIS_PROFILE: "" })).toEqual({});
  });
});
