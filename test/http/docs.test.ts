import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ENVELOPE_CODE } from "../../src/http/errors.ts";

describe("docs/http.md", () => {
  test("the error table lists every failure kind with its envelope code", () => {
    const doc = readFileSync(join(import.meta.dir, "../../docs/http.md"), "utf8");
    for (const [kind, code] of Object.entries(ENVELOPE_CODE)) {
      expect(doc).toMatch(new RegExp(`^\\| ${code} \\|[^\\n]*\`${kind}\``, "m"));
    }
  });
});
