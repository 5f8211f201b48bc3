import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { arrayElement, arrayLiteral, decimalArray, decimalOf, DECIMALS_MAX } from "../../src/db/literals.ts";
import { freshStore, storeKinds, type TestStore } from "../support/stores.ts";

// Texts a message's columns can hold: JSON with quotes and backslashes, braces and commas, the word NULL, nothing.
const TEXTS: (string | null)[] = ['{"text":"a \\"quoted\\" word \\\\ and a tab\\t"}', "{a,b}", "NULL", "", " padded ", "ünïcödé 🎉", null, "back\\slash", 'a"b'];

describe("array literals (pure)", () => {
  test.each([
    [null, "NULL"],
    [undefined, "NULL"],
    ["plain", '"plain"'],
    ["", '""'],
    ['a"b', '"a\\"b"'],
    ["a\\b", '"a\\\\b"'],
    ["NULL", '"NULL"'],
  ] as const)("element %p is written %s", (input, written) => {
    expect(arrayElement(input)).toBe(written);
  });
  test("a literal joins its elements; an empty list is {}", () => {
    expect(arrayLiteral([])).toBe("{}");
    expect(arrayLiteral(["a", null, 'q"'])).toBe('{"a",NULL,"q\\""}');
    expect(decimalArray(["1", "18446744073709551615"])).toBe("{1,18446744073709551615}");
  });

  test.each([0n, 1n, -1n, 9_007_199_254_740_993n, (1n << 63n) - 1n, -(1n << 63n), (1n << 60n) + 12_345n])("decimalOf(%p) is its toString", (v) => {
    expect(decimalOf(v)).toBe(v.toString());
    expect(decimalOf(v)).toBe(v.toString()); // the cached text, as the first
  });

  test("decimalOf stays exact past its bound (it starts again empty)", () => {
    const base = 1n << 61n;
    for (let i = 0n; i < BigInt(DECIMALS_MAX) * 2n + 7n; i++) {
      const v = base + i * 7_919n;
      if (decimalOf(v) !== v.toString()) throw new Error(`decimalOf(${v}) = ${decimalOf(v)}`);
    }
    expect(decimalOf(base)).toBe(base.toString());
  });
});

for (const kind of storeKinds()) {
  describe(`array literals read back by the database [${kind}]`, () => {
    let ts: TestStore;
    beforeAll(async () => {
      ts = await freshStore(kind);
    });
    afterAll(() => ts.dispose());

    test("every text comes back as it was, in order, NULL as null", async () => {
      const rows = await ts.store.query<{ t: string | null; n: string }>(
        "select t, n::text as n from unnest($1::text[], $2::bigint[]) with ordinality as x(t, n, i) order by i",
        [arrayLiteral(TEXTS), decimalArray(TEXTS.map((_, i) => String(9_007_199_254_740_993n + BigInt(i))))],
      );
      expect(rows.map((r) => r.t)).toEqual(TEXTS);
      expect(rows.map((r) => r.n)).toEqual(TEXTS.map((_, i) => String(9_007_199_254_740_993n + BigInt(i))));
    });
  });
}
