import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ArrayBytes, arrayElement, arrayLiteral, decimalArray, decimalOf, DECIMALS_MAX } from "../../src/db/literals.ts";
import { freshStore, storeKinds, type TestStore } from "../support/stores.ts";

// Texts a message's columns can hold: JSON with quotes and backslashes, braces and commas, the word NULL, nothing.
const TEXTS: (string | null)[] = ['{"text":"a \\"quoted\\" word \\\\ and a tab\\t"}', "{a,b}", "NULL", "", " padded ", "ünïcödé 🎉", null, "back\\slash", 'a"b'];

// Past 256 bytes a payload is copied in runs between the bytes to escape: quotes and backslashes at its ends, in a
// row, only one kind, none; and a text that turns non-ASCII after its first characters.
const LONG = [
  `"${"a".repeat(300)}\\"`,
  `${'"'.repeat(40)}${"\\".repeat(40)}${"x".repeat(300)}`,
  `${"q".repeat(500)}"${"q".repeat(500)}`,
  `${"\\z".repeat(200)}`,
  "n".repeat(1000),
  `{"text":"${"ü🎉\\\"".repeat(100)}"}`,
];

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

  const utf8 = (s: string) => new TextEncoder().encode(s);
  const bytesOf = (write: (w: ArrayBytes) => void) => {
    const w = new ArrayBytes().open();
    write(w);
    return new TextDecoder().decode(w.close());
  };

  test("ArrayBytes writes the literal arrayLiteral writes, for texts given as strings and as UTF-8", () => {
    expect(bytesOf((w) => TEXTS.forEach((t) => w.text(t)))).toBe(arrayLiteral(TEXTS));
    expect(bytesOf((w) => TEXTS.forEach((t) => (t === null ? w.bare("NULL") : w.utf8(utf8(t)))))).toBe(arrayLiteral(TEXTS));
    expect(bytesOf(() => {})).toBe("{}");
    expect(bytesOf((w) => ["1", "NULL", "-9223372036854775808"].forEach((d) => w.bare(d)))).toBe("{1,NULL,-9223372036854775808}");
  });

  test.each(LONG.map((t, i) => [i, t]))("a long text %p comes out escaped as arrayElement escapes it", (_, t) => {
    expect(bytesOf((w) => w.utf8(utf8(t)))).toBe(`{${arrayElement(t)}}`);
    expect(bytesOf((w) => w.text(t))).toBe(`{${arrayElement(t)}}`);
  });

  test("a literal larger than the scratch grows it, and the next literal starts empty", () => {
    const w = new ArrayBytes();
    const big = '"'.repeat(20_000);
    w.open().utf8(utf8(big));
    expect(new TextDecoder().decode(w.close())).toBe(`{${arrayElement(big)}}`);
    w.open().text("é");
    expect(new TextDecoder().decode(w.close())).toBe('{"é"}');
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

    test("ArrayBytes' literals, bound as bytes, come back as they were (a text cast to bigint[] and text[])", async () => {
      const texts = [...TEXTS, ...LONG];
      const w = new ArrayBytes();
      w.open();
      for (const t of texts) if (t === null) w.bare("NULL"); else w.utf8(new TextEncoder().encode(t));
      const asBytes = w.close();
      w.open();
      for (const t of texts) w.text(t);
      const asText = w.close();
      w.open();
      texts.forEach((_, i) => w.bare(i === 1 ? "NULL" : String(9_007_199_254_740_993n + BigInt(i))));
      const ids = w.close();
      const rows = await ts.store.query<{ a: string | null; b: string | null; n: string | null }>(
        "select a, b, n::text as n from unnest($1::text[], $2::text[], $3::bigint[]) with ordinality as x(a, b, n, i) order by i",
        [asBytes, asText, ids],
      );
      expect(rows.map((r) => r.a)).toEqual(texts);
      expect(rows.map((r) => r.b)).toEqual(texts);
      expect(rows.map((r) => r.n)).toEqual(texts.map((_, i) => (i === 1 ? null : String(9_007_199_254_740_993n + BigInt(i)))));
    });
  });
}
