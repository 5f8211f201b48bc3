import { expect, test } from "bun:test";
import { ALLOCATOR_DEFAULTS, missingDefaults } from "../../src/runtime/allocator.ts";
import { selfCommand } from "../../src/runtime/self.ts";

test("the default is holes kept, not returned one by one", () => {
  expect(ALLOCATOR_DEFAULTS).toEqual({ MIMALLOC_PURGE_HOLES: "0" });
});

test.each([
  [{}, { MIMALLOC_PURGE_HOLES: "0" }],
  [{ MIMALLOC_PURGE_HOLES: "1" }, {}],
  [{ MIMALLOC_PURGE_HOLES: "" }, {}],
  [{ OTHER: "x" }, { MIMALLOC_PURGE_HOLES: "0" }],
] as [Record<string, string>, Record<string, string>][])("missingDefaults(%p) = %p", (env, want) => {
  expect(missingDefaults(env)).toEqual(want);
});

test.each([
  ["plain bun", "/usr/bin/bun", ["--smol"], ["/usr/bin/bun", "/srv/src/main.ts", "--workers", "2"], ["/usr/bin/bun", "--smol", "/srv/src/main.ts", "--workers", "2"]],
  ["plain bun, no flags", "/usr/bin/bun", [], ["/usr/bin/bun", "/srv/src/main.ts"], ["/usr/bin/bun", "/srv/src/main.ts"]],
  ["compiled binary", "/opt/ibis", [], ["bun", "/$bunfs/root/ibis", "--workers", "2"], ["/opt/ibis", "--workers", "2"]],
  ["compiled on Windows", "C:\\ibis.exe", [], ["bun", "B:/~BUN/root/ibis.exe"], ["C:\\ibis.exe"]],
] as [string, string, string[], string[], string[]][])("selfCommand: %s", (_, execPath, execArgv, argv, want) => {
  expect(selfCommand({ execPath, execArgv, argv })).toEqual(want);
});
