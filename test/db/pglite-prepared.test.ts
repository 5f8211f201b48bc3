import { describe, expect, test } from "bun:test";
import type { PGlite } from "@electric-sql/pglite";
import { PreparedStatements, textParam } from "../../src/db/pglite-prepared.ts";
import { freshStore, pgliteClient } from "../support/stores.ts";

/** A fresh PGlite store's client with its own prepared statements. */
async function withPrepared(run: (client: PGlite, p: PreparedStatements) => Promise<void>): Promise<void> {
  const { store, dispose } = await freshStore("pglite");
  try {
    const client = pgliteClient(store);
    await run(client, new PreparedStatements(client));
  } finally {
    await dispose();
  }
}

describe("textParam: parameters in PostgreSQL's text form", () => {
  const cases: [string, unknown, string | null][] = [
    ["null", null, null],
    ["undefined", undefined, null],
    ["text as is", 'a "b" \\c', 'a "b" \\c'],
    ["number", 42, "42"],
    ["bigint past 2^53, exact", (1n << 60n) + 1n, "1152921504606846977"],
    ["boolean", true, "t"],
    ["decimal array", ["1", "2"], '{"1","2"}'],
    ["numbers array (quoted: the same values to PostgreSQL)", [1n, 2], '{"1","2"}'],
    ["text array, quotes and backslashes escaped, NULL unquoted", ['a"b', "c\\d", null], '{"a\\"b","c\\\\d",NULL}'],
    ["empty array", [], "{}"],
  ];
  for (const [name, v, want] of cases) test(name, () => expect(textParam(v)).toBe(want));
  test("anything else is refused", () => expect(() => textParam({ a: 1 })).toThrow(TypeError));
});

describe("PreparedStatements (PGlite)", () => {
  test("the same rows and types as query, parsed once per text, errors with their codes", () =>
    withPrepared(async (client, p) => {
      await client.exec("create table pp (id bigint primary key, t text, n int)");
      const insert = "insert into pp select * from unnest($1::bigint[], $2::text[], $3::int[]) returning id, t, n";
      const big = (1n << 60n) + 3n;
      const rows = await p.query(insert, [[big.toString(), "2"], ['x"y', null], [7, 8]]);
      expect(rows).toEqual((await client.query("select * from pp order by id desc")).rows);
      expect(rows[0]).toEqual({ id: big, t: 'x"y', n: 7 });
      // A statement without rows; then the first one again (already prepared).
      expect(await p.query("update pp set n = $1 where id = $2", [9, 2])).toEqual([]);
      // (PGlite's int8 parser gives a number when it is exact, a bigint past 2^53: the same as its query.)
      expect(await p.query(insert, [["5"], ["z"], [1]])).toEqual([{ id: 5, t: "z", n: 1 }]);
      const named = await client.query<{ n: number }>("select count(*)::int as n from pg_prepared_statements where name like 'ibis_%'");
      expect(named.rows[0]!.n).toBe(2);
      // A unique violation comes back as PostgreSQL's error (code 23505) and the session stays usable.
      const err = await p.query(insert, [["5"], ["dup"], [1]]).catch((e: unknown) => e);
      expect((err as { code?: string }).code).toBe("23505");
      expect(await p.query("select count(*)::int as n from pp", [])).toEqual([{ n: 3 }]);
      // A text that does not parse is refused and not remembered as prepared.
      expect(await p.query("selec 1", []).catch((e: unknown) => (e as { code?: string }).code)).toBe("42601");
      expect(await p.query("select 1 as one", [])).toEqual([{ one: 1 }]);
    }));

  // Large messages are built in one buffer kept between them: each must be sent as its own bytes, whatever was
  // in the buffer before (a longer message, other text).
  test("large parameters, one after another in the kept buffer, are stored exactly", () =>
    withPrepared(async (client, p) => {
      await client.exec("create table big (id int primary key, t text)");
      const utf8 = (s: string) => new TextEncoder().encode(s);
      const texts = ["é".repeat(1_600_000), "b".repeat(1_200_000) + "→", "c".repeat(3_000_000), "d".repeat(1_100_000)];
      for (const [i, t] of texts.entries()) {
        expect(await p.query("insert into big values ($1, $2) returning id", [i, utf8(t)])).toEqual([{ id: i }]);
        // A small statement between large ones takes a buffer of its own.
        expect(await p.query("select count(*)::int as n from big", [])).toEqual([{ n: i + 1 }]);
      }
      const rows = (await client.query<{ id: number; t: string }>("select id, t from big order by id")).rows;
      expect(rows.map((r) => r.t.length)).toEqual(texts.map((t) => t.length));
      for (const [i, t] of texts.entries()) expect(rows[i]!.t === t).toBe(true);
    }));

  test("waits for an open transaction: a statement never runs, and rolls back, inside someone else's", () =>
    withPrepared(async (client, p) => {
      await client.exec("create table tx (id int primary key)");
      let inside!: () => void;
      const entered = new Promise<void>((r) => (inside = r));
      const rolledBack = client
        .transaction(async (tx) => {
          await tx.query("insert into tx values (1)");
          inside();
          await Bun.sleep(50); // the prepared insert is issued meanwhile
          await tx.rollback();
        })
        .catch(() => {});
      await entered;
      const mine = p.query("insert into tx values ($1) returning id", [2]);
      await rolledBack;
      expect(await mine).toEqual([{ id: 2 }]);
      expect((await client.query<{ id: number }>("select id from tx order by id")).rows).toEqual([{ id: 2 }]);
    }));
});
