import { describe, expect, test } from "bun:test";
import { RecentMessages, type RecentMessage } from "../../src/delivery/recent.ts";

const msg = (n: number, inbox: bigint[] = [1n, 2n]): RecentMessage => ({ id: `C2C.${1000 + n}.1.r`, serverId: BigInt(n), chatType: "C2C", inbox });

describe("RecentMessages", () => {
  test("finds a message by id and by tsid, only for a user whose inbox holds it", () => {
    const r = new RecentMessages();
    r.remember(msg(1));
    expect(r.byId(1n, "C2C.1001.1.r")?.serverId).toBe(1n);
    expect(r.byTsid(2n, "C2C", "1001")?.serverId).toBe(1n);
    expect(r.byId(3n, "C2C.1001.1.r")).toBeUndefined();
    expect(r.byTsid(3n, "C2C", "1001")).toBeUndefined();
  });

  // Weight = inbox size + 1 per message; past the bound the oldest go first.
  const cases: [string, number, number, number[]][] = [
    ["under the bound: all kept", 40, 10, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
    ["at the bound: all kept", 30, 10, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
    ["past it: the oldest leave", 9, 10, [8, 9, 10]],
    ["long past it (the evicted prefix is compacted): the newest stay", 30, 5000, [4991, 4992, 4993, 4994, 4995, 4996, 4997, 4998, 4999, 5000]],
  ];
  for (const [name, maxWeight, count, kept] of cases) {
    test(name, () => {
      const r = new RecentMessages(maxWeight);
      for (let n = 1; n <= count; n++) r.remember(msg(n));
      const held = Array.from({ length: count }, (_, i) => i + 1).filter((n) => r.byId(1n, `C2C.${1000 + n}.1.r`));
      expect(held).toEqual(kept);
      expect(r.size).toBe(kept.length);
      // The tsid index forgets with the id index.
      expect(Array.from({ length: count }, (_, i) => i + 1).filter((n) => r.byTsid(1n, "C2C", String(1000 + n)))).toEqual(kept);
    });
  }

  test("a message remembered twice counts once", () => {
    const r = new RecentMessages(6);
    r.remember(msg(1));
    r.remember(msg(1));
    r.remember(msg(2));
    expect(r.size).toBe(2);
    expect(r.byId(1n, "C2C.1001.1.r")).toBeDefined();
  });

  test("two messages with one <TYPE>.<tsid> (two conversations): the later is found, the earlier falls to the store, and its eviction keeps the later", () => {
    const r = new RecentMessages(6);
    const a: RecentMessage = { id: "C2C.77.1.a", serverId: 1n, chatType: "C2C", inbox: [1n, 2n] };
    const b: RecentMessage = { id: "C2C.77.2.b", serverId: 2n, chatType: "C2C", inbox: [3n, 4n] };
    r.remember(a);
    r.remember(b);
    expect(r.byId(1n, a.id)).toBeUndefined(); // not a wrong answer: the ack resolves from the store
    expect(r.byId(3n, b.id)?.serverId).toBe(2n);
    expect(r.byId(3n, "C2C.77.9.zz")).toBeUndefined(); // same key, another id: never b
    r.remember(msg(1)); // weight 9 > 6: a leaves, b stays
    expect(r.byTsid(4n, "C2C", "77")?.serverId).toBe(2n);
  });

  test("a large group's message weighs its members", () => {
    const r = new RecentMessages(1000);
    r.remember(msg(1));
    r.remember(msg(2, Array.from({ length: 998 }, (_, i) => BigInt(i))));
    expect(r.byId(1n, "C2C.1001.1.r")).toBeUndefined(); // 3 + 999 > 1000: the older one left
    expect(r.byId(5n, "C2C.1002.1.r")).toBeDefined();
  });
});
