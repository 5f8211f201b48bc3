import { describe, expect, test } from "bun:test";
import { BatchLoader } from "../../src/db/batch-load.ts";

describe("BatchLoader", () => {
  test("keys asked in one turn share the first query; keys asked while a query runs share the next one", async () => {
    const calls: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const loader = new BatchLoader<number, string>(async (keys) => {
      calls.push(keys);
      if (calls.length === 1) await gate;
      return new Map(keys.map((k) => [k, `v${k}`]));
    }, "missing");
    const first = [1, 5].map((k) => loader.load(k));
    expect(calls).toEqual([]); // the first query starts on the next macrotask
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([[1, 5]]);
    const rest = [2, 3, 2, 4].map((k) => loader.load(k));
    release();
    expect(await Promise.all(first)).toEqual(["v1", "v5"]);
    expect(await Promise.all(rest)).toEqual(["v2", "v3", "v2", "v4"]);
    expect(calls).toEqual([[1, 5], [2, 3, 4]]); // equal keys share one slot
    expect(loader.queries).toBe(2);
  });

  test("keys the query leaves out get the missing value; maxBatch splits", async () => {
    const calls: number[][] = [];
    const loader = new BatchLoader<number, string>(
      async (keys) => {
        calls.push(keys);
        return new Map(keys.filter((k) => k % 2 === 0).map((k) => [k, "even"]));
      },
      "none",
      2,
    );
    const block = loader.load(0); // in flight: the next five wait and split by two
    await new Promise((r) => setImmediate(r));
    const got = await Promise.all([1, 2, 3, 4, 5].map((k) => loader.load(k)));
    await block;
    expect(got).toEqual(["none", "even", "none", "even", "none"]);
    expect(calls).toEqual([[0], [1, 2], [3, 4], [5]]);
  });

  test("a failed query rejects its callers only; the next batch goes on", async () => {
    let fail = true;
    const loader = new BatchLoader<number, number>(async (keys) => {
      if (fail) {
        fail = false;
        throw new Error("db down");
      }
      return new Map(keys.map((k) => [k, k * 10]));
    }, -1);
    const a = loader.load(1);
    await new Promise((r) => setImmediate(r)); // 1's query is running: 2 waits for the next
    const b = loader.load(2);
    expect(await a.catch((e: Error) => e.message)).toBe("db down");
    expect(await b).toBe(20);
  });
});
