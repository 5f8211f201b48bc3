import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseJsonSharing } from "../../src/protocol/json-sharing.ts";
import { LARGE_PAYLOAD_CHARS, MAX_JSON_DEPTH, parseJson } from "../../src/protocol/json.ts";

describe("parseJsonSharing: long strings of a large text as slices, answers as parseJson", () => {
  const long = (c: string, n = 5000) => c.repeat(n);
  // Padding that makes a text large without adding a long string (many short ones).
  const pad = Array.from({ length: LARGE_PAYLOAD_CHARS / 8 }, (_, i) => `p${i}`);
  const answer = (f: () => unknown) => {
    try {
      return { ok: f() };
    } catch (e) {
      return { err: (e as Error).name };
    }
  };
  const same = (text: string) => expect(answer(() => parseJsonSharing(text, MAX_JSON_DEPTH))).toEqual(answer(() => parseJson(text, MAX_JSON_DEPTH)));

  test.each([
    ["one long value", JSON.stringify({ id: "x", payload: { text: long("x", LARGE_PAYLOAD_CHARS) } })],
    ["several, in arrays and nested objects", JSON.stringify({ a: [long("a"), { b: long("b") }, long("c")], pad, d: long("d") })],
    ["escapes: parsed, not sliced", JSON.stringify({ t: long("a\n\"\\\u2028é😀", 20000) })],
    ["a long key stays a key", `{"${long("k", LARGE_PAYLOAD_CHARS)}": "${long("v")}"}`],
    ["__proto__ with a long value stays an own member", `{"__proto__": "${long("p", LARGE_PAYLOAD_CHARS)}", "x": 1}`],
    ["long numbers stay exact", `{"id": 9007199254740993, "t": "${long("n", LARGE_PAYLOAD_CHARS)}", "ids": [18446744073709551615]}`],
    ["a string that looks like a placeholder", JSON.stringify({ p: "\u0000abc:0", t: long("z", LARGE_PAYLOAD_CHARS) })],
    ["a large text with no long string", JSON.stringify({ pad })],
    ["raw control character in a long string", `{"t": "${long("a", LARGE_PAYLOAD_CHARS)}\u0001"}`], // a raw U+0001 in the text
    ["unterminated long string", `{"t": "${long("a", LARGE_PAYLOAD_CHARS)}`],
    ["long string where a key belongs", `{"${long("a", LARGE_PAYLOAD_CHARS)}" 1}`],
    ["long string after a syntax error", `{"a": tru, "t": "${long("a", LARGE_PAYLOAD_CHARS)}"}`],
    ["two values without a comma", `{"a": "${long("a", LARGE_PAYLOAD_CHARS)}" "b"}`],
    ["nesting past the bound", `${"[".repeat(MAX_JSON_DEPTH + 1)}"${long("a", LARGE_PAYLOAD_CHARS)}"${"]".repeat(MAX_JSON_DEPTH + 1)}`],
  ])("%s", (_name, text) => same(text));

  test("a raw control character makes it a SyntaxError, as JSON.parse", () => {
    const text = `{"t": "${long("a", LARGE_PAYLOAD_CHARS)}\u0001"}`;
    expect(() => parseJsonSharing(text)).toThrow(SyntaxError);
  });

  test("__proto__ stays an own member: no prototype is set", () => {
    const v = parseJsonSharing(`{"__proto__": "${long("p", LARGE_PAYLOAD_CHARS)}"}`) as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.hasOwn(v, "__proto__")).toBe(true);
    expect((Object.getOwnPropertyDescriptor(v, "__proto__")!.value as string).length).toBe(LARGE_PAYLOAD_CHARS);
  });

  test("property: large texts of generated JSON parse as parseJson parses them", () => {
    const big = fc.oneof(fc.constant(""), fc.string({ minLength: 4097, maxLength: 4200 }), fc.constant(long("y", 9000)));
    const value = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: "small" }, fc.jsonValue({ maxDepth: 1 }), big, fc.array(tie("v"), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 4 }), tie("v"), { maxKeys: 4 })),
    })).v;
    fc.assert(
      fc.property(value, fc.constantFrom(0, 1, "\t"), (v, indent) => {
        const text = JSON.stringify({ v, pad: long(" ", LARGE_PAYLOAD_CHARS) }, null, indent as never);
        expect(parseJsonSharing(text, MAX_JSON_DEPTH)).toEqual(parseJson(text, MAX_JSON_DEPTH));
      }),
      { numRuns: 150 },
    );
  });
});
