import { describe, expect, test } from "bun:test";
import { pairKey, pairOfKey } from "../../../src/domain/social/facts.ts";

const MAX = (1n << 63n) - 1n;
const MIN = -(1n << 63n);
// Ids at the edges of sint64 (the ids' range), either sign, and the bench's ids above 2^60.
const IDS = [0n, 1n, -1n, 2n, MAX, MIN, MAX - 1n, MIN + 1n, 1n << 60n, (1n << 60n) + 1n, 9_007_199_254_740_993n, -9_007_199_254_740_993n];

describe("the relation cache's pair key", () => {
  test("reads back as the pair it was made of, for every pair of edge ids", () => {
    for (const from of IDS) for (const to of IDS) expect(pairOfKey(pairKey(from, to))).toEqual([from, to]);
  });

  test("no two pairs share a key (a relation is one direction: (a, b) is not (b, a))", () => {
    const keys = new Map<bigint, string>();
    for (const from of IDS) {
      for (const to of IDS) {
        const k = pairKey(from, to);
        expect(keys.get(k)).toBeUndefined();
        keys.set(k, `${from}:${to}`);
      }
    }
    expect(keys.size).toBe(IDS.length * IDS.length);
  });
});
