import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { renderMigrations } from "../../scripts/embed-migrations.ts";

describe("embedded migrations", () => {
  test("src/db/migrations.gen.ts matches ./drizzle", () => {
    const root = join(import.meta.dir, "../..");
    expect(readFileSync(join(root, "src/db/migrations.gen.ts"), "utf8")).toBe(renderMigrations(join(root, "drizzle")));
  });
});
