import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { exactReviver, MAX_JSON_DEPTH, memberSpan, parseJson, parseJsonBytes, stringifyJson, tryParseJson, utf8 } from "../../src/protocol/json.ts";

describe("JSON codec: exact 64-bit integers", () => {
  test.each([
    ["9007199254740993", 9007199254740993n],
    [" 9007199254740993", 9007199254740993n],
    ["-9007199254740993", -9007199254740993n],
    ['{"id":9223372036854775807}', { id: 9223372036854775807n }],
    ['{"a":[1,9007199254740993]}', { a: [1, 9007199254740993n] }],
    ['{"s":"9007199254740993"}', { s: "9007199254740993" }],
    ['{"n":5,"f":1.5}', { n: 5, f: 1.5 }],
    ["1e300", 1e300],
  ])("parse %s", (text, want) => {
    expect(parseJson(text)).toEqual(want as never);
  });

  test("bigint leaves as a bare JSON number", () => {
    expect(stringifyJson({ id: 9223372036854775807n, list: [1n] })).toBe('{"id":9223372036854775807,"list":[1]}');
  });

  test("property: any int64 survives stringify → parse exactly, at any position", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), (n) => {
        const back = parseJson(stringifyJson({ v: n, a: [n], top: 0 })) as { v: unknown; a: unknown[] };
        const top = parseJson(stringifyJson(n));
        const norm = (x: unknown) => (typeof x === "number" ? BigInt(x) : x);
        return norm(back.v) === n && norm(back.a[0]) === n && norm(top) === n;
      }),
    );
  });

  test("property: numbers that are not exact safe integers always come back as bigint", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n << 53n, max: (1n << 64n) - 1n }), (n) => typeof parseJson(n.toString()) === "bigint"),
    );
  });
});

describe("JSON codec: the exact parse agrees with a reviver reading each literal's source", () => {
  // The reference: what parseJson did before it scanned, and what the browser build still does.
  const reference = (text: string) => JSON.parse(text, exactReviver as never) as unknown;
  const outcome = (f: () => unknown) => {
    try {
      return { ok: true, value: f() };
    } catch (e) {
      return { ok: false, error: (e as Error).constructor.name };
    }
  };
  const agrees = (text: string) => expect(outcome(() => parseJson(text))).toEqual(outcome(() => reference(text)));

  const big = fc.oneof(
    fc.bigInt({ min: -(1n << 63n), max: (1n << 64n) - 1n }),
    fc.bigInt({ min: (1n << 53n) - 3n, max: (1n << 53n) + 3n }),
    fc.constantFrom(9007199254740993n, -9007199254740993n, 1152921504606846977n, 1152921504606846979n),
  );
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: "small" },
      big,
      fc.jsonValue({ maxDepth: 1 }),
      fc.constantFrom(1e20, 12345678901234567.5, -0, 1.5e300, 9007199254740992),
      fc.stringMatching(/^[\d:,\[\]{}"\\ -]{0,24}$/),
      fc.array(tie("v"), { maxLength: 4 }),
      fc.dictionary(fc.oneof(fc.string({ maxLength: 3 }), fc.constantFrom("__proto__", "0", "12", "from")), tie("v"), { maxKeys: 4 }),
    ),
  })).v;

  test("property: any value written with exact ids, compact or spaced, parses as the reference parses it", () => {
    fc.assert(
      fc.property(value, fc.boolean(), (v, spaced) => {
        const text = stringifyJson(v);
        agrees(text);
        if (spaced) agrees(text.replace(/([,:[{])/g, "$1 \n\t"));
      }),
      { numRuns: 500 },
    );
  });

  test("property: arbitrary text of JSON's characters fails or parses as the reference does", () => {
    const piece = fc.constantFrom("{", "}", "[", "]", ",", ":", '"a"', '"\\""', " ", "12345678901234567890", "-9007199254740993", "0012345678901234567", "1e20", ".5", "true", "null");
    fc.assert(fc.property(fc.array(piece, { maxLength: 12 }), (ps) => agrees(ps.join(""))), { numRuns: 2000 });
  });

  test.each([
    '{"from":1152921504606846977,"to":1152921504606846979}',
    '{"__proto__":12345678901234567890,"x":[9007199254740993,{"y":-9007199254740993}]}',
    '{"a":12345678901234567890,"a":98765432109876543210,"b":9007199254740993}',
    "[9007199254740993,9007199254740993,9007199254740992]",
    '{12345678901234567890:1}',
    '{"a":1,12345678901234567890:2}',
    '{"a":0012345678901234567}',
    '{"a":12345678901234567890x}',
    '{"s":"12345678901234567890","n":12345678901234567890}',
    '{"s":"a\\"12345678901234567890","n":1}',
    "12345678901234567890",
    "12345678901234567890.0",
  ])("%s", (text) => agrees(text));

  test("an own __proto__ member stays data", () => {
    const v = parseJson('{"__proto__":12345678901234567890}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(v, "__proto__")?.value).toBe(12345678901234567890n);
  });
});

describe("JSON codec: edges", () => {
  test("a long digit run inside a string stays a string", () => {
    expect(parseJson('{"s":"[1234567890123456789]"}')).toEqual({ s: "[1234567890123456789]" });
  });

  test("large non-integer literals stay numbers", () => {
    expect(parseJson("[12345678901234567890.5, 1e300]")).toEqual([12345678901234567890.5, 1e300]);
  });

  test("bytes, malformed input", () => {
    expect(parseJsonBytes(utf8('{"id":9007199254740993}'))).toEqual({ id: 9_007_199_254_740_993n });
    expect(tryParseJson("{nope")).toEqual({ ok: false });
    expect(() => parseJsonBytes(new Uint8Array([0xff, 0xfe]))).toThrow();
  });
});

describe("memberSpan: a top-level member's source text", () => {
  test("property: parses to the member JSON.parse gives, whatever the formatting", () => {
    const obj = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 });
    fc.assert(
      fc.property(obj, fc.jsonValue({ maxDepth: 3 }), fc.constantFrom(0, 1, "\t", " \n "), fc.nat(5), (rest, payload, indent, at) => {
        // Keys JSON writes with escapes are left to the parser (memberSpan answers undefined): plain keys here.
        const keys = Object.keys(rest).filter((k) => k !== "payload" && !JSON.stringify(k).includes("\\"));
        const entries: [string, unknown][] = keys.map((k) => [k, rest[k]]);
        entries.splice(Math.min(at, entries.length), 0, ["payload", payload]);
        const text = JSON.stringify(Object.fromEntries(entries), null, indent as never);
        const got = memberSpan(text, "payload")?.text;
        expect(got).toBeDefined();
        expect(JSON.parse(got!)).toEqual(JSON.parse(text).payload);
        expect(memberSpan(text, "absent-key")?.text).toBeUndefined();
      }),
      { numRuns: 400 },
    );
  });

  test.each([
    ['{"payload":{"text":"a\\\\"},"x":1}', '{"text":"a\\\\"}'],
    ['{"x":"\\"payload\\":1","payload":[1,{"a":"]}"}]}', '[1,{"a":"]}"}]'],
    ['{ "payload" : -1.5e3 , "y":true}', "-1.5e3"],
    ['{"payload":"\\\\"}', '"\\\\"'],
  ])("%s", (text, want) => {
    expect(memberSpan(text, "payload")?.text).toBe(want);
  });

  test("duplicates and escaped keys are left to the parser", () => {
    expect(memberSpan('{"payload":1,"payload":2}', "payload")?.text).toBeUndefined();
    expect(memberSpan('{"pay\\u006coad":1}', "payload")?.text).toBeUndefined();
    expect(memberSpan("{}", "payload")?.text).toBeUndefined();
  });
});

describe("JSON codec: nesting bound for untrusted input", () => {
  const nested = (n: number, open = "[", close = "]") => open.repeat(n) + close.repeat(n);
  test("at the bound parses; one deeper is a SyntaxError naming the bound", () => {
    expect(parseJson(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBeDefined();
    expect(() => parseJson(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toThrow(new RegExp(`nested deeper than ${MAX_JSON_DEPTH}`));
    expect(tryParseJson(nested(200_000, '{"a":', "}"), MAX_JSON_DEPTH).ok).toBe(false);
  });
  test("brackets inside strings (escaped quotes and backslashes too) do not count; without a bound nothing changes", () => {
    for (const text of [`{"s":"${"[".repeat(500)}\\\"${"{".repeat(500)}"}`, `{"s":"\\\\","t":"${"[".repeat(500)}"}`]) {
      expect(parseJson(text, MAX_JSON_DEPTH)).toEqual(JSON.parse(text));
    }
    expect(parseJson(nested(MAX_JSON_DEPTH + 1))).toBeDefined();
  });
});
