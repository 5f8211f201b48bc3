import { describe, expect, test } from "bun:test";
import { ID_EPOCH_MS, IdGenerator, idFloorForTime, idTimestamp, MAX_NODE_ID, toId } from "../../src/ids/tsid.ts";

const T = Date.UTC(2026, 0, 1);

describe("IdGenerator", () => {
  test("ids are above 2^53 from the first one and strictly increasing within one ms and across ms", () => {
    let t = T;
    const gen = new IdGenerator(7, () => t);
    const seen: bigint[] = [];
    for (let i = 0; i < 10_000; i++) {
      if (i % 3000 === 0) t++;
      seen.push(gen.next());
    }
    expect(seen[0]! > 2n ** 53n).toBe(true);
    for (let i = 1; i < seen.length; i++) expect(seen[i]! > seen[i - 1]!).toBe(true);
  });

  test("4096 ids in one ms borrow the next ms instead of repeating", () => {
    const gen = new IdGenerator(1, () => T);
    const ids = Array.from({ length: 5000 }, () => gen.next());
    expect(new Set(ids).size).toBe(5000);
    expect(idTimestamp(ids[4999]!)).toBe(T + 1);
  });

  test("a clock going backwards never yields a smaller id", () => {
    let t = T;
    const gen = new IdGenerator(1, () => t);
    const a = gen.next();
    t = T - 10_000;
    const b = gen.next();
    expect(b > a).toBe(true);
  });

  test("ids of different nodes in the same ms differ, and carry their time", () => {
    const a = new IdGenerator(0, () => T).next();
    const b = new IdGenerator(MAX_NODE_ID, () => T).next();
    expect(a).not.toBe(b);
    expect(idTimestamp(a)).toBe(T);
    expect(idTimestamp(b)).toBe(T);
    expect(idFloorForTime(T) <= a).toBe(true);
    expect(idFloorForTime(T + 1) > b).toBe(true);
    expect(Number(ID_EPOCH_MS)).toBe(Date.UTC(2020, 0, 1));
  });

  test("mints exactly the ids of the all-bigint reference, through bursts, ms changes and a clock going back", () => {
    // The generator before it kept its state in numbers: every id must still be the one this gives.
    const reference = (node: number, now: () => number) => {
      let lastMs = 0n;
      let seq = 0n;
      return () => {
        let ms = BigInt(now());
        if (ms < lastMs) ms = lastMs;
        if (ms === lastMs) {
          seq = (seq + 1n) & 4095n;
          if (seq === 0n) ms = lastMs + 1n;
        } else seq = 0n;
        lastMs = ms;
        return ((ms - ID_EPOCH_MS) << 22n) | (BigInt(node) << 12n) | seq;
      };
    };
    // Clock readings: steady, a burst past 4096 in one ms, a jump back, a jump ahead, repeats.
    const clock = [
      ...Array.from({ length: 50 }, (_, i) => T + Math.floor(i / 7)),
      ...Array.from({ length: 9000 }, () => T + 100),
      T + 3, T + 3, T + 101, T + 102, T + 102, T + 5000, T - 1, T + 5000, T + 5001,
    ];
    for (const node of [0, 7, MAX_NODE_ID]) {
      let i = 0;
      let j = 0;
      const gen = new IdGenerator(node, () => clock[i++]!);
      const ref = reference(node, () => clock[j++]!);
      for (let k = 0; k < clock.length; k++) {
        const [a, b] = [gen.next(), ref()];
        if (a !== b) throw new Error(`node ${node}, reading ${k}: ${a} against ${b}`);
      }
    }
  });

  test("node id must be 0..1023", () => {
    for (const bad of [-1, 1024, 1.5, Number.NaN]) expect(() => new IdGenerator(bad)).toThrow(RangeError);
  });
});

describe("toId", () => {
  const big = 9_007_199_254_740_993n; // 2^53 + 1
  test.each([
    [big, big],
    ["9007199254740993", big],
    [" 42 ", 42n],
    [42, 42n],
    [0, 0n],
    ["0", 0n],
    ["9223372036854775807", 9_223_372_036_854_775_807n],
  ] as [unknown, bigint][])("%p → %p", (input, want) => {
    expect(toId(input)).toBe(want);
  });

  test.each([
    [9007199254740993], // an unsafe number has already lost precision
    [1.5],
    [-1],
    [-1n],
    ["-1"],
    ["01"],
    ["1e3"],
    ["0x10"],
    [""],
    ["abc"],
    ["9223372036854775808"], // above int8
    [2n ** 63n],
    [null],
    [undefined],
    [true],
    [{}],
  ] as [unknown][])("%p is not an id", (input) => {
    expect(toId(input)).toBeUndefined();
  });
});
