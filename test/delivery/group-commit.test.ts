import { describe, expect, test } from "bun:test";
import { GroupCommit, StoreUnavailable, type BatchOrder } from "../../src/delivery/group-commit.ts";

/** A depth-2 GroupCommit whose writes each wait for their gate (opened by the test, in write order). */
function gated<T>(order: BatchOrder<T>) {
  const writes: T[][] = [];
  const gates: (() => void)[] = [];
  const gc = new GroupCommit<T, T>(
    async (items) => {
      writes.push(items);
      await new Promise<void>((r) => gates.push(r));
      return items;
    },
    100,
    2,
    undefined,
    order,
  );
  return { gc, writes, gates, turn: () => new Promise((r) => setImmediate(r)) };
}

describe("GroupCommit", () => {
  test("stallMs: a batch in flight that long gives its slot back (the next goes out beside it), at most depth more", async () => {
    const { gc, writes, gates, turn } = gated<number>({ stallMs: 20 });
    const until = async (n: number) => {
      for (let i = 0; i < 500 && writes.length < n; i++) await Bun.sleep(5);
    };
    const all = [gc.add(1), gc.add(2)];
    await turn();
    all.push(gc.add(3));
    await turn();
    expect(writes).toEqual([[1, 2], [3]]); // two slots, both held
    all.push(gc.add(4));
    await turn();
    expect(writes.length).toBe(2); // waits for a slot
    await until(3); // without stallMs it would wait for an answer forever
    expect(writes[2]).toEqual([4]);
    all.push(gc.add(5));
    await until(4);
    expect(writes[3]).toEqual([5]);
    // Four in flight (depth 2 and two stalled beyond it): the next waits for an answer, however long they stall.
    all.push(gc.add(6));
    await Bun.sleep(80);
    expect(writes.length).toBe(4);
    gates[0]!();
    await until(5);
    expect(writes[4]).toEqual([6]);
    for (let i = 1; i < 5; i++) gates[i]!();
    expect(await Promise.all(all)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  test("stallMs: none while the store is failing (everything is stuck, not one statement): the slots alone", async () => {
    const writes: number[][] = [];
    const gates: (() => void)[] = [];
    const gc = new GroupCommit<number, number>(
      async (items) => {
        writes.push(items);
        if (items[0] === 1) throw new Error("connection cut");
        await new Promise<void>((r) => gates.push(r));
        return items;
      },
      100,
      2,
      undefined,
      { stallMs: 20 },
    );
    await expect(gc.add(1)).rejects.toThrow("connection cut");
    expect(gc.failing).toBe(true);
    const all = [gc.add(2)];
    await Bun.sleep(1);
    all.push(gc.add(3));
    await Bun.sleep(1);
    expect(writes).toEqual([[1], [2], [3]]); // two slots, both held
    all.push(gc.add(4));
    await Bun.sleep(80); // stalled four times over, and still only the slots
    expect(writes.length).toBe(3);
    gates[0]!();
    for (let i = 0; i < 200 && writes.length < 4; i++) await Bun.sleep(5);
    expect(writes[3]).toEqual([4]);
    gates[1]!();
    gates[2]!();
    expect(await Promise.all(all)).toEqual([2, 3, 4]);
    expect(gc.failing).toBe(false);
  });


  test("items enqueued together share one write; results come back in order", async () => {
    const writes: number[][] = [];
    const gc = new GroupCommit<number, string>(async (items) => {
      writes.push(items);
      return items.map((i) => `r${i}`);
    }, 100);
    const results = await Promise.all([1, 2, 3].map((i) => gc.add(i)));
    expect(results).toEqual(["r1", "r2", "r3"]);
    expect(writes).toEqual([[1, 2, 3]]);
  });

  test("while a batch is in flight the next one accumulates; maxBatch splits", async () => {
    const writes: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const gc = new GroupCommit<number, number>(async (items) => {
      writes.push(items);
      if (writes.length === 1) await gate;
      return items;
    }, 3);
    const first = gc.add(0);
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual([[0]]);
    const rest = [1, 2, 3, 4, 5].map((i) => gc.add(i));
    expect(gc.pending).toBe(5);
    release();
    await Promise.all([first, ...rest]);
    expect(writes).toEqual([[0], [1, 2, 3], [4, 5]]);
    expect(gc.batches).toBe(3);
  });

  test("forEachUnanswered: items queued and items sent and not answered, none answered (committed or failed)", async () => {
    const { gc, gates, turn } = gated<number>({});
    const unanswered = () => {
      const seen: number[] = [];
      gc.forEachUnanswered((i) => seen.push(i));
      return seen.sort((a, b) => a - b);
    };
    const done = [gc.add(1), gc.add(2)];
    expect(unanswered()).toEqual([1, 2]); // queued, not sent yet
    await turn();
    done.push(gc.add(3));
    expect(unanswered()).toEqual([1, 2, 3]); // 1 and 2 in flight, 3 in the second slot's batch or queued
    await turn();
    gates.shift()!();
    await done[0];
    expect(unanswered()).toEqual([3]);
    gates.shift()!();
    await Promise.all(done);
    expect(unanswered()).toEqual([]);
  });

  test("a failed write rejects every item of its batch and the queue goes on", async () => {
    let fail = true;
    const gc = new GroupCommit<number, number>(async (items) => {
      if (fail) throw new Error("db down");
      return items;
    }, 10);
    const settled = await Promise.allSettled([gc.add(1), gc.add(2)]);
    expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected"]);
    fail = false;
    expect(await gc.add(3)).toBe(3);
    await gc.flush();
  });

  test("depth 2: a second batch is written while the first is in flight, but settles after it", async () => {
    const writes: number[][] = [];
    let releaseFirst!: () => void;
    const gate = new Promise<void>((r) => (releaseFirst = r));
    const gc = new GroupCommit<number, number>(
      async (items) => {
        writes.push(items);
        if (writes.length === 1) await gate;
        return items;
      },
      10,
      2,
    );
    const order: number[] = [];
    const first = gc.add(1).then((r) => order.push(r));
    await new Promise((r) => setImmediate(r));
    const second = gc.add(2).then((r) => order.push(r));
    await new Promise((r) => setImmediate(r));
    // Both batches are written; the second finished first but must wait for the first to settle.
    expect(writes).toEqual([[1], [2]]);
    await new Promise((r) => setTimeout(r, 5));
    expect(order).toEqual([]);
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual([1, 2]);
    // A third batch waits for a free slot only when two are in flight.
    await gc.flush();
    expect(gc.batches).toBe(2);
  });

  test("overlapBelow: a second batch goes out beside a small one in flight, never beside a large one", async () => {
    const { gc, writes, gates, turn } = gated<number>({ overlapBelow: 3 });
    // Light load: two items in flight (fewer than 3), so the next one is written at once beside them.
    const light = [gc.add(1), gc.add(2)];
    await turn();
    light.push(gc.add(3));
    await turn();
    expect(writes).toEqual([[1, 2], [3]]);
    // Both slots taken: the next waits for one to free, then goes beside the other (one item in flight).
    light.push(gc.add(4));
    await turn();
    expect(writes.length).toBe(2);
    gates[0]!();
    await turn();
    await turn();
    expect(writes).toEqual([[1, 2], [3], [4]]);
    gates[1]!();
    gates[2]!();
    await Promise.all(light);
    // Heavy load: a batch of three in flight (not fewer than 3) keeps the second slot shut; what arrives meanwhile
    // grows into one batch, written when the first commits.
    writes.length = 0;
    gates.length = 0;
    const heavy = [gc.add(5), gc.add(6), gc.add(7)];
    await turn();
    heavy.push(gc.add(8), gc.add(9));
    await turn();
    expect(writes).toEqual([[5, 6, 7]]);
    gates[0]!();
    await turn();
    await turn();
    expect(writes).toEqual([[5, 6, 7], [8, 9]]);
    gates[1]!();
    expect(await Promise.all(heavy)).toEqual([5, 6, 7, 8, 9]);
  });

  test("overlapBelow with weightOf: nothing goes out beside a batch holding an item that weighs the whole bound", async () => {
    const { gc, writes, gates, turn } = gated<string>({ overlapBelow: 32, weightOf: (i) => (i.startsWith("g") ? 32 : 1) });
    const all = [gc.add("g1")];
    await turn();
    all.push(gc.add("a1"), gc.add("a2"));
    await turn();
    expect(writes).toEqual([["g1"]]); // a group item in flight: the second slot stays shut
    gates[0]!();
    await turn();
    await turn();
    expect(writes).toEqual([["g1"], ["a1", "a2"]]);
    all.push(gc.add("g2"));
    await turn();
    expect(writes).toEqual([["g1"], ["a1", "a2"], ["g2"]]); // two light items in flight: a group item may go beside them
    gates[1]!();
    gates[2]!();
    expect(await Promise.all(all)).toEqual(["g1", "a1", "a2", "g2"]);
  });

  test("keyed: a slow batch holds up later batches of its own senders only; an unkeyed item orders against all", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    type Item = { key?: string; n: number };
    const gc = new GroupCommit<Item, number>(
      async (items) => {
        if (items.some((i) => i.n === 1)) await gate; // the first batch is slow (a large message)
        return items.map((i) => i.n);
      },
      10,
      3,
      { maxItems: 100, maxBytes: 1e9, sizeOf: (i) => (i.n === 1 ? 16 << 20 : 10) },
      { keyOf: (i) => i.key, batchBytes: 1 << 20 },
    );
    const order: number[] = [];
    const add = (key: string | undefined, n: number) => gc.add({ key, n }).then((r) => void order.push(r));
    const slow = add("a", 1);
    await new Promise((r) => setImmediate(r));
    const other = add("b", 2); // another sender: settles while "a"'s batch is still writing
    await new Promise((r) => setImmediate(r));
    const sameSender = add("a", 3); // waits for "a"'s earlier batch
    await new Promise((r) => setImmediate(r));
    await other;
    expect(order).toEqual([2]);
    release();
    await Promise.all([slow, sameSender]);
    expect(order).toEqual([2, 1, 3]);

    // An item without a key (a notice) waits for every earlier batch, and later ones wait for it.
    let release2!: () => void;
    const gate2 = new Promise<void>((r) => (release2 = r));
    const gc2 = new GroupCommit<Item, number>(
      async (items) => {
        if (items.some((i) => i.n === 1)) await gate2;
        return items.map((i) => i.n);
      },
      10,
      3,
      undefined,
      { keyOf: (i) => i.key },
    );
    const seen: number[] = [];
    const p1 = gc2.add({ key: "a", n: 1 }).then((r) => seen.push(r));
    await new Promise((r) => setImmediate(r));
    const p2 = gc2.add({ n: 2 }).then((r) => seen.push(r));
    await new Promise((r) => setImmediate(r));
    const p3 = gc2.add({ key: "b", n: 3 }).then((r) => seen.push(r));
    await new Promise((r) => setTimeout(r, 5));
    expect(seen).toEqual([]);
    release2();
    await Promise.all([p1, p2, p3]);
    expect(seen).toEqual([1, 2, 3]);
  });

  test("batchBytes: a large item goes alone; small ones fill a batch up to the budget", async () => {
    const writes: number[][] = [];
    const gc = new GroupCommit<number, number>(
      async (items) => {
        writes.push(items);
        return items;
      },
      100,
      1,
      { maxItems: 100, maxBytes: 1e9, sizeOf: (n) => n },
      { batchBytes: 100 },
    );
    await Promise.all([40, 50, 1000, 30, 30, 30, 30].map((n) => gc.add(n)));
    expect(writes).toEqual([[40, 50], [1000], [30, 30, 30], [30]]);
  });

  test("largeLane: a large item is written beside the one small batch slot; its sender's later items settle after it", async () => {
    type Item = { sender: string; size: number };
    const writes: number[][] = [];
    let releaseLarge!: () => void;
    const large = new Promise<void>((r) => (releaseLarge = r));
    const gc = new GroupCommit<Item, number>(
      async (items) => {
        writes.push(items.map((i) => i.size));
        if (items.some((i) => i.size > 100)) await large;
        return items.map((i) => i.size);
      },
      100,
      1,
      { maxItems: 100, maxBytes: 1e9, sizeOf: (i) => i.size },
      { batchBytes: 100, keyOf: (i) => i.sender, largeLane: true },
    );
    const settled: string[] = [];
    const add = (sender: string, size: number) => gc.add({ sender, size }).then(() => settled.push(`${sender}${size}`));
    const turn = () => new Promise((r) => setImmediate(r));
    const big = add("a", 1000); // the lane
    await turn();
    await Promise.all([add("b", 1), add("c", 2)]); // written and settled while the large insert runs
    const aSmall = add("a", 3); // written (its slot frees when the database answers) but settled after a's large one
    await turn();
    await add("d", 4); // so d's batch is not held up by a's
    const second = add("e", 2000); // the lane is busy: this one waits its turn
    await turn();
    expect(writes).toEqual([[1000], [1, 2], [3], [4]]);
    expect(settled).toEqual(["b1", "c2", "d4"]);
    releaseLarge();
    await Promise.all([big, aSmall, second]);
    expect(settled).toEqual(["b1", "c2", "d4", "a1000", "a3", "e2000"]);
    expect(writes).toEqual([[1000], [1, 2], [3], [4], [2000]]);
  });

  test("bounded: beyond maxItems or maxBytes waiting, add refuses at once (StoreUnavailable queue_full)", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const gc = new GroupCommit<number, number>(
      async (items) => {
        await gate;
        return items;
      },
      2,
      1,
      { maxItems: 3, maxBytes: 100, sizeOf: (n) => n },
    );
    const first = gc.add(1); // in flight once the macrotask runs
    await new Promise((r) => setImmediate(r));
    const queued = [gc.add(2), gc.add(3), gc.add(4)];
    await expect(gc.add(5)).rejects.toEqual(new StoreUnavailable("queue_full")); // 3 waiting
    expect(gc.pending).toBe(3);
    release();
    expect(await Promise.all([first, ...queued])).toEqual([1, 2, 3, 4]);
    const big = new GroupCommit<number, number>(async (items) => items, 10, 1, { maxItems: 10, maxBytes: 100, sizeOf: (n) => n });
    const alone = big.add(150); // an empty queue takes one item, whatever its size
    await expect(big.add(1)).rejects.toBeInstanceOf(StoreUnavailable);
    expect(await alone).toBe(150);
  });

  test("enqueue: callbacks instead of a promise; a refusal is told at once; a callback that throws skips no one", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const gc = new GroupCommit<number, number>(
      async (items) => {
        await gate;
        if (items.includes(13)) throw new Error("db down");
        return items.map((i) => i * 10);
      },
      3,
      1,
      { maxItems: 3, maxBytes: 1_000, sizeOf: () => 1 },
    );
    const told: string[] = [];
    const on = (i: number) => [(r: number) => told.push(`${i}:${r}`), (e: unknown) => told.push(`${i}:${(e as Error).message}`)] as const;
    gc.enqueue(1, ...on(1)); // in flight once the macrotask runs
    await new Promise((r) => setImmediate(r));
    gc.enqueue(2, () => {
      throw new Error("a caller's bug");
    }, on(2)[1]);
    gc.enqueue(3, ...on(3));
    gc.enqueue(4, ...on(4));
    gc.enqueue(5, ...on(5)); // three waiting: refused in this call, not later
    expect(told).toEqual(["5:store queue full"]);
    release();
    await gc.flush();
    expect(told).toEqual(["5:store queue full", "1:10", "3:30", "4:40"]);
    gc.enqueue(13, ...on(13));
    await gc.flush();
    expect(told.at(-1)).toBe("13:db down");
  });

  test("after a failed batch only one batch's worth waits (a probe); the first commit ends it", async () => {
    let fail = true;
    const gc = new GroupCommit<number, number>(
      async (items) => {
        if (fail) throw new Error("db down");
        return items;
      },
      2,
      1,
      { maxItems: 1000, maxBytes: 1e9, sizeOf: () => 1 },
    );
    await expect(gc.add(1)).rejects.toThrow("db down");
    expect(gc.failing).toBe(true);
    const probe = [gc.add(2), gc.add(3)];
    await expect(gc.add(4)).rejects.toEqual(new StoreUnavailable("store_failing"));
    fail = false;
    expect(await Promise.all(probe)).toEqual([2, 3]);
    expect(gc.failing).toBe(false);
    expect(await Promise.all([5, 6, 7].map((n) => gc.add(n)))).toEqual([5, 6, 7]);
  });
});
