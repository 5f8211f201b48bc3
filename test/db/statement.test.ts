import { describe, expect, test } from "bun:test";
import { sql, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { FixedStatement } from "../../src/db/statement.ts";
import { openDevicesQuery, openDevicesStatement } from "../../src/delivery/inbox.ts";
import { sessionsAmongQuery, sessionsAmongStatement } from "../../src/domain/auth/sessions.ts";

const dialect = new PgDialect();

describe("FixedStatement", () => {
  const cases: { name: string; build: (a: unknown, b: unknown) => SQL; args: [unknown, unknown] }[] = [
    { name: "arguments in order", build: (a, b) => sql`select ${a}::text, ${b}::int`, args: ["x", 7] },
    { name: "arguments in the other order", build: (a, b) => sql`select ${b}::int, ${a}::text`, args: ["x", 7] },
    { name: "constants between them", build: (a, b) => sql`select ${a}::text, ${42}::int, ${b}::bigint, ${"k"}::text`, args: ["x", 2n ** 60n] },
    { name: "an argument twice", build: (a, b) => sql`select ${a}::text, ${b}::int, ${a}::text`, args: ["x", 7] },
    { name: "nested statements", build: (a, b) => sql`select * from (${sql`select ${a}::text as v`}) s where s.v <> ${b}`, args: ["x", "y"] },
  ];
  for (const c of cases) {
    test(`binds what drizzle would compile: ${c.name}`, () => {
      const st = new FixedStatement<[unknown, unknown]>((a, b) => c.build(a, b), 2);
      const want = dialect.sqlToQuery(c.build(...c.args));
      for (let i = 0; i < 2; i++) expect(st.bind(...c.args)).toEqual({ text: want.sql, params: want.params });
      const other: [unknown, unknown] = ["other", 9];
      const wantOther = dialect.sqlToQuery(c.build(...other));
      expect(st.bind(...other)).toEqual({ text: wantOther.sql, params: wantOther.params });
    });
  }

  test("builds its text once, on the first bind", () => {
    let builds = 0;
    const st = new FixedStatement<[string]>((a) => (builds++, sql`select ${a}::text`), 1);
    expect(builds).toBe(0);
    for (let i = 0; i < 3; i++) st.bind(`v${i}`);
    expect(builds).toBe(1);
  });

  test("a placeholder of its own making is refused", () => {
    const st = new FixedStatement<[string]>((a) => sql`select ${a}::text, ${sql.placeholder("stray")}::text`, 1);
    expect(() => st.bind("x")).toThrow(/unknown placeholder stray/);
  });
});

// The hot statements keep the text and parameters of the builders their plan tests explain.
describe("the compiled-once statements", () => {
  const base = 1n << 60n;
  test("the connect check", () => {
    for (const n of [1, 3]) {
      const reqs = Array.from({ length: n }, (_, i) => ({ userId: base + BigInt(i), deviceId: `d"${i}\\`, fresh: (base >> 2n) + BigInt(i) }));
      const want = dialect.sqlToQuery(openDevicesQuery(reqs));
      expect(openDevicesStatement(reqs)).toEqual({ text: want.sql, params: want.params });
    }
  });
  test("the session check", () => {
    for (const n of [1, 3]) {
      const keys = Array.from({ length: n }, (_, i) => ({ userId: base + BigInt(i), deviceId: `d,${i}` }));
      const want = dialect.sqlToQuery(sessionsAmongQuery(keys));
      expect(sessionsAmongStatement(keys)).toEqual({ text: want.sql, params: want.params });
    }
  });
});
