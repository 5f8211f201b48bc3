import { describe, expect, test } from "bun:test";
import { BatchLoader } from "../../src/db/batch-load.ts";

describe("BatchLoader", () => {
  test("a lone key is loaded at once; keys asked while a query runs share the next one", async () => {
    const calls: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const loader = new BatchLoader<number, string>(async (keys) => {
      calls.push(keys);
      if (calls.length === 1) await gate;
      return new Map(keys.map((k) => [k, `v${k}`]));
    }, "missing");
    const first = loader.load(1);
    const rest = [2, 3, 2, 4].map((k) => loader.load(k));
    expect(calls).toEqual([[1]]);
    release();
    expect(await first).toBe("v1");
    expect(await Promise.all(rest)).toEqual(["v2", "v3", "v2", "v4"]);
    expect(calls).toEqual([[1], [2, 3, 4]]); // equal keys share one slot
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
    const b = loader.load(2);
    expect(await a.catch((e: Error) => e.message)).toBe("db down");
    expect(await b).toBe(20);
  });

  test("gather: keys asked in one turn of the event loop share the first query (the embedded store)", async () => {
    const calls: number[][] = [];
    const loader = new BatchLoader<number, number>(
      async (keys) => {
        calls.push(keys);
        return new Map(keys.map((k) => [k, k]));
      },
      -1,
      1000,
      () => true,
    );
    const first = [1, 2, 3].map((k) => loader.load(k));
    expect(calls).toEqual([]); // not yet: the query starts on the next macrotask
    expect(await Promise.all(first)).toEqual([1, 2, 3]);
    expect(calls).toEqual([[1, 2, 3]]);
  });

  test("depth: keys asked while queries run go out beside them, up to depth in flight; the rest form the next batch", async () => {
    const calls: number[][] = [];
    const gates: (() => void)[] = [];
    const loader = new BatchLoader<number, number>(
      async (keys) => {
        calls.push(keys);
        await new Promise<void>((r) => gates.push(r));
        return new Map(keys.map((k) => [k, k * 2]));
      },
      -1,
      1000,
      () => false,
      2,
    );
    const a = loader.load(1);
    const b = loader.load(2); // beside the first: depth 2
    const rest = [3, 4, 3].map((k) => loader.load(k)); // both slots taken: these wait, together
    expect(calls).toEqual([[1], [2]]);
    gates[1]!(); // the second ends first: the waiting keys take its slot at once
    expect(await b).toBe(4);
    expect(calls).toEqual([[1], [2], [3, 4]]);
    gates[2]!();
    expect(await Promise.all(rest)).toEqual([6, 8, 6]);
    gates[0]!();
    expect(await a).toBe(2);
    expect(loader.queries).toBe(3);
  });

  test("depth: a loader that throws at once rejects its callers and keeps its slot count", async () => {
    let n = 0;
    const loader = new BatchLoader<number, number>(
      ((keys: number[]) => {
        if (n++ === 0) throw new Error("sync failure");
        return Promise.resolve(new Map(keys.map((k) => [k, k])));
      }) as (keys: number[]) => Promise<ReadonlyMap<number, number>>,
      -1,
      1000,
      () => false,
      1,
    );
    expect(await loader.load(1).catch((e: Error) => e.message)).toBe("sync failure");
    expect(await loader.load(2)).toBe(2); // the failed query freed its slot
  });

  test("an answer that is no map rejects its callers and frees the slot", async () => {
    let n = 0;
    const loader = new BatchLoader<number, number>(
      (keys) => Promise.resolve((n++ === 0 ? undefined : new Map(keys.map((k) => [k, k]))) as unknown as ReadonlyMap<number, number>),
      -1,
    );
    expect(await loader.load(1).then(() => "answered", () => "rejected")).toBe("rejected");
    expect(await loader.load(2)).toBe(2);
  });
});
