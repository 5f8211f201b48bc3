import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseJson, parseJsonBytes, stringifyJson, tryParseJson, utf8 } from "../../src/protocol/json.ts";

describe("JSON codec", () => {
  test("integers beyond 2^53 are read exactly as bigint; safe numbers stay numbers", () => {
    const v = parseJson('{"id":9223372036854775807,"n":12,"f":1.5,"list":[18446744073709551615, -9007199254740993]}') as any;
    expect(v.id).toBe(9_223_372_036_854_775_807n);
    expect(v.n).toBe(12);
    expect(v.f).toBe(1.5);
    expect(v.list).toEqual([18_446_744_073_709_551_615n, -9_007_199_254_740_993n]);
  });

  test("bigint is written as a bare JSON number", () => {
    expect(stringifyJson({ id: 9_007_199_254_740_993n, s: "x" })).toBe('{"id":9007199254740993,"s":"x"}');
  });

  test("a long digit run inside a string stays a string", () => {
    expect(parseJson('{"s":"[1234567890123456789]"}')).toEqual({ s: "[1234567890123456789]" });
  });

  test("large non-integer literals stay numbers", () => {
    expect(parseJson("[12345678901234567890.5, 1e300]")).toEqual([12345678901234567890.5, 1e300]);
  });

  test("round trip of any 64-bit id is exact", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }), (id) => {
        const back = parseJson(stringifyJson({ id })) as { id: bigint | number };
        expect(BigInt(back.id)).toBe(id);
        if (id > 2n ** 53n) expect(typeof back.id).toBe("bigint");
      }),
    );
  });

  test("bytes, malformed input", () => {
    expect(parseJsonBytes(utf8('{"id":9007199254740993}'))).toEqual({ id: 9_007_199_254_740_993n });
    expect(tryParseJson("{nope")).toEqual({ ok: false });
    expect(() => parseJsonBytes(new Uint8Array([0xff, 0xfe]))).toThrow();
  });
});
