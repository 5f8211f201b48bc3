import { describe, expect, test } from "bun:test";
import { envList, parseArgs, usageOf } from "./args.ts";

describe("bench flags", () => {
  test.each([
    ["IBIS_DELIVERY_WRITE_DEPTH=1", { IBIS_DELIVERY_WRITE_DEPTH: "1" }],
    ["A=1,B=x=y", { A: "1", B: "x=y" }], // a value may hold "="
    ["A=,junk,B=2", { A: "", B: "2" }], // an item without "=" is ignored; an empty value is a value
    ["", {}],
  ])("variables %p", (spec, env) => {
    expect(envList(spec)).toEqual(env);
  });

  test("values, = forms and bare flags", () => {
    expect(parseArgs(["--pairs", "50", "--ibis=postgres", "--representative", "--loads", "25,50"])).toEqual({
      pairs: "50",
      ibis: "postgres",
      representative: true,
      loads: "25,50",
    });
  });

  test("usage is the script's leading doc comment without its stars", () => {
    const src = `/**\n * c2c: durable C2C.\n *\n *   bun run bench:c2c [--pairs 50]\n */\nimport x from "y";\n/** not this */`;
    expect(usageOf(src)).toBe("c2c: durable C2C.\n\n  bun run bench:c2c [--pairs 50]");
    expect(usageOf(`import x from "y";`)).toBe("");
  });

  test("--help prints the usage and exits before anything runs", () => {
    const run = Bun.spawnSync(["bun", "bench/c2c.ts", "--help"], { cwd: `${import.meta.dir}/../..`, env: { ...process.env } });
    const out = run.stdout.toString();
    expect(run.exitCode).toBe(0);
    expect(out).toContain("bun run bench:c2c");
    expect(out).toContain("Common scenario flags");
    expect(out).not.toContain("round 1/");
  });
});
