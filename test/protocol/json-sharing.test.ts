import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { CleanBlocks, parseJsonBytesSharing, parseJsonSharing, verbatimBytes } from "../../src/protocol/json-sharing.ts";
import { LARGE_PAYLOAD_CHARS, MAX_JSON_DEPTH, parseJson, utf8 } from "../../src/protocol/json.ts";

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

describe("parseJsonBytesSharing: a large UTF-8 text read in place, answers as parseJson of its strict decode", () => {
  const long = (c: string, n = 5000) => c.repeat(n);
  const strict = new TextDecoder("utf-8", { fatal: true });
  const answer = (f: () => unknown) => {
    try {
      return { ok: f() };
    } catch (e) {
      return { err: (e as Error).name };
    }
  };
  // Members read through (bun's toEqual does not call an array element's accessor).
  const plain = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(plain) : typeof v === "object" && v !== null ? Object.fromEntries(Object.keys(v).map((k) => [k, plain((v as never)[k])])) : v;
  const viaText = (bytes: Uint8Array) => answer(() => parseJson(strict.decode(bytes), MAX_JSON_DEPTH));
  const inPlace = (bytes: Uint8Array) => answer(() => plain(parseJsonBytesSharing(bytes, "payload", MAX_JSON_DEPTH).value));
  const same = (bytes: Uint8Array) => expect(inPlace(bytes)).toEqual(viaText(bytes));
  const withBytes = (head: string, middle: number[], tail: string) => new Uint8Array([...utf8(head), ...middle, ...utf8(tail)]);

  test.each([
    ["a payload's long value", JSON.stringify({ id: "x", payload: { text: long("x", LARGE_PAYLOAD_CHARS) } })],
    ["non-ASCII long values, in and out of the payload", JSON.stringify({ a: long("é😀✓"), payload: { t: [long("ü"), { x: long("水") }] }, z: "ß" })],
    ["the payload itself a long string", JSON.stringify({ payload: long("QUJD", LARGE_PAYLOAD_CHARS), e2ee: { e2ee: true } })],
    ["long values that start with what rules read (digits, -, space)", JSON.stringify({ payload: { a: long("1"), b: `-${long("2")}`, c: ` ${long("x")}`, d: `\u3000${long("x")}` } })],
    ["escapes: parsed, not shared", JSON.stringify({ payload: { t: long("a\n\"\\\u2028é😀", 20000) } })],
    ["a long key stays a key", `{"${long("k", LARGE_PAYLOAD_CHARS)}": "${long("v")}"}`],
    ["__proto__ with a long value stays an own member", `{"payload": {"__proto__": "${long("p", LARGE_PAYLOAD_CHARS)}", "x": 1}}`],
    ["long numbers stay exact", `{"id": 9007199254740993, "payload": {"t": "${long("n", LARGE_PAYLOAD_CHARS)}", "ids": [18446744073709551615]}}`],
    ["a string that looks like a placeholder", JSON.stringify({ p: "\u0000abc:0", payload: { t: long("z", LARGE_PAYLOAD_CHARS) } })],
    ["raw control character in a long string", `{"payload": {"t": "${long("a", LARGE_PAYLOAD_CHARS)}\u0001"}}`],
    ["unterminated long string", `{"payload": {"t": "${long("a", LARGE_PAYLOAD_CHARS)}`],
    ["long string after a syntax error", `{"a": tru, "payload": "${long("a", LARGE_PAYLOAD_CHARS)}"}`],
    ["two values without a comma", `{"payload": "${long("a", LARGE_PAYLOAD_CHARS)}" "b"}`],
    ["nesting past the bound", `{"payload":${"[".repeat(MAX_JSON_DEPTH + 1)}"${long("a", LARGE_PAYLOAD_CHARS)}"${"]".repeat(MAX_JSON_DEPTH + 1)}}`],
  ])("%s", (_name, text) => same(utf8(text)));

  test.each([
    ["an invalid byte inside a long string", [0xff]],
    ["a lone surrogate (ED A0 80) inside a long string", [0xed, 0xa0, 0x80]],
    ["an overlong NUL (C0 80) inside a long string", [0xc0, 0x80]],
    ["a truncated sequence before the closing quote", [0xe6, 0xb0]],
  ])("invalid UTF-8: %s is refused as the decode refuses it (TypeError)", (_name, bad) => {
    const bytes = withBytes(`{"payload": {"t": "${long("a", LARGE_PAYLOAD_CHARS)}`, bad, `${long("b")}"}}`);
    expect(inPlace(bytes)).toEqual({ err: "TypeError" });
    same(bytes);
    same(withBytes(`{"x": "${long("a", LARGE_PAYLOAD_CHARS)}`, bad, `"}`));
  });

  test("a payload's long strings stay bytes until read, then hold their text; others are plain strings at once", () => {
    const text = long("ab✓", LARGE_PAYLOAD_CHARS);
    const r = parseJsonBytesSharing(utf8(JSON.stringify({ other: text, payload: { text, list: [text] } })), "payload");
    const v = r.value as { other: string; payload: { text: string; list: string[] } };
    expect(Object.getOwnPropertyDescriptor(v, "other")!.value).toBe(text);
    expect(Object.getOwnPropertyDescriptor(v.payload, "text")!.get).toBeDefined();
    expect(Object.getOwnPropertyDescriptor(v.payload.list, 0)!.get).toBeDefined();
    expect(r.standIn).toEqual({ text: expect.stringMatching(/^\u0000/), list: [expect.stringMatching(/^\u0000/)] });
    expect(v.payload.text).toBe(text);
    expect(Object.getOwnPropertyDescriptor(v.payload, "text")!.value).toBe(text); // read once, held
    expect(JSON.stringify(v)).toBe(JSON.stringify({ other: text, payload: { text, list: [text] } }));
    v.payload.list[0] = "set";
    expect(v.payload.list).toEqual(["set"]);
  });

  test("long strings that are not most of the bytes: the whole text is read (no placeholders, no stand-in)", () => {
    const source = JSON.stringify({ payload: { a: long("y"), nums: Array.from({ length: 20_000 }, (_, i) => i) } });
    const r = parseJsonBytesSharing(utf8(source), "payload");
    expect([r.text === source, r.standIn, r.sharesWithin(0, r.text.length)]).toEqual([true, undefined, false]);
    expect(r.value).toEqual(JSON.parse(source));
    expect(Object.getOwnPropertyDescriptor((r.value as { payload: object }).payload, "a")!.value).toBe(long("y"));
  });

  test("byteAt maps the parsed text's indexes outside placeholders to the bytes", () => {
    const source = `{"é":"😀","payload":{"t":"${long("✓", LARGE_PAYLOAD_CHARS)}"},"z":"ß"}`;
    const bytes = utf8(source);
    const r = parseJsonBytesSharing(bytes, "payload");
    const at = (needle: string) => r.byteAt(r.text.indexOf(needle));
    expect(at('"payload"')).toBe(utf8(source.slice(0, source.indexOf('"payload"'))).length);
    expect(at('"z"')).toBe(utf8(source.slice(0, source.indexOf('"z"'))).length);
    expect(r.sharesWithin(r.text.indexOf('"payload"'), r.text.indexOf('"z"'))).toBe(true);
    expect(r.sharesWithin(0, r.text.indexOf('"payload"'))).toBe(false);
  });

  test("property: generated messages read in place parse as their text parses", () => {
    const big = fc.oneof(fc.constant(""), fc.string({ unit: "grapheme", minLength: 4097, maxLength: 4200 }), fc.constant(long("y", 9000)), fc.constant(long("水", 5000)));
    const value = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: "small" }, fc.jsonValue({ maxDepth: 1 }), big, fc.array(tie("v"), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 4 }), tie("v"), { maxKeys: 4 })),
    })).v;
    fc.assert(
      fc.property(value, value, fc.constantFrom(0, 1, "\t"), (payload, other, indent) => {
        const bytes = utf8(JSON.stringify({ other, payload, pad: long(" ", LARGE_PAYLOAD_CHARS) }, null, indent as never));
        expect(inPlace(bytes)).toEqual(viaText(bytes));
      }),
      { numRuns: 150 },
    );
  });

  test("verbatimBytes: every byte below 0x20 and the backslash, at every offset and alignment; nothing else", () => {
    const buf = new Uint8Array(64).fill(0x61);
    for (let start = 0; start < 4; start++) {
      for (let pos = start; pos < 40; pos++) {
        for (const bad of [0x00, 0x01, 0x0a, 0x1f, 0x5c]) {
          const b = buf.slice();
          b[pos] = bad;
          expect(verbatimBytes(b.subarray(start), 0, 40 - start)).toBe(false);
        }
      }
      expect(verbatimBytes(buf.subarray(start), 0, 40 - start)).toBe(true);
    }
    const word = new Uint8Array(8);
    for (let a = 0; a < 256; a++) {
      for (let c = 0; c < 256; c += 3) {
        word.fill(0x41);
        word[4] = a;
        word[5] = c;
        expect(verbatimBytes(word, 0, 8)).toBe(!(a < 0x20 || a === 0x5c || c < 0x20 || c === 0x5c));
      }
    }
  });
});

describe("CleanBlocks: a large message's escapes and control characters found ahead, a slice at a time", () => {
  const BLOCK = 1 << 16;
  // A view starting off a block (and off a word) boundary, as a frame's payload does.
  const view = (bad: number[]) => {
    const buf = new Uint8Array(5 * BLOCK + 777).fill(0x61);
    for (const at of bad) buf[at] = 0x01;
    return buf.subarray(9, buf.length - 5);
  };
  // Ranges (offsets in the view) with their ends inside blocks, on block boundaries, and inside one block.
  const edges = [0, 1, BLOCK - 9, BLOCK - 8, BLOCK + 3, 2 * BLOCK - 9, 3 * BLOCK + 100, 4 * BLOCK - 9, 4 * BLOCK - 8, 5 * BLOCK];
  const ranges = edges.flatMap((from) => edges.filter((to) => to > from).map((to) => [from, to] as const));

  // A bad byte (buffer offsets) in: no block, the first and last byte of a block, the partial head, the tail.
  for (const bad of [[], [BLOCK], [2 * BLOCK - 1], [12], [3 * BLOCK + 50], [5 * BLOCK + 700], [BLOCK, 4 * BLOCK + 5]]) {
    test(`answers as the plain scan with a control byte at ${JSON.stringify(bad)}: scanned in full, in part, not at all`, () => {
      const b = view(bad);
      for (const steps of [Infinity, 2, 0]) {
        const clean = new CleanBlocks(b);
        if (steps === Infinity) while (!clean.step(BLOCK)) {}
        else for (let i = 0; i < steps; i++) clean.step(BLOCK);
        expect(clean.done).toBe(steps === Infinity);
        for (const [from, to] of ranges) expect([from, to, clean.verbatim(b, from, to)]).toEqual([from, to, verbatimBytes(b, from, to)]);
        // Another view of the same bytes (as a protobuf payload field is), and of other bytes.
        const inner = b.subarray(BLOCK + 5);
        expect(clean.verbatim(inner, 0, 3 * BLOCK)).toBe(verbatimBytes(inner, 0, 3 * BLOCK));
        const other = b.slice();
        expect(verbatimBytes(other, 0, other.length, clean)).toBe(verbatimBytes(other, 0, other.length));
      }
    });
  }

  test("a backslash counts as a control character does", () => {
    const b = view([]);
    b[2 * BLOCK + 10] = 0x5c;
    const clean = new CleanBlocks(b);
    clean.step(Infinity);
    expect(clean.verbatim(b, BLOCK, 4 * BLOCK)).toBe(false);
    expect(clean.verbatim(b, 3 * BLOCK, 5 * BLOCK)).toBe(true);
  });

  test("parseJsonBytesSharing reads the same value with the blocks as without", () => {
    const text = "x".repeat(3 * BLOCK);
    for (const payload of [{ text }, { text, bad: `${text}\n` }, { list: [text, "short", `${text}é`] }]) {
      const bytes = utf8(JSON.stringify({ id: "C2C.1.2.3", payload }));
      const clean = new CleanBlocks(bytes);
      clean.step(Infinity);
      expect(structuredClone(parseJsonBytesSharing(bytes, "payload", MAX_JSON_DEPTH, clean).value)).toEqual(
        structuredClone(parseJsonBytesSharing(bytes, "payload", MAX_JSON_DEPTH).value),
      );
    }
  });
});
