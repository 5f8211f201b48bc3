import { describe, expect, test } from "bun:test";
import { TtlCache } from "../../../src/domain/social/cache.ts";

describe("TtlCache refresh-ahead", () => {
  // TTL 1000 ms: due from 750 ms of age (the last quarter), gone at 1000.
  const cases: { age: number; answered: boolean; due: boolean }[] = [
    { age: 0, answered: true, due: false },
    { age: 749, answered: true, due: false },
    { age: 750, answered: true, due: true },
    { age: 999, answered: true, due: true },
    { age: 1000, answered: false, due: false },
  ];
  for (const c of cases) {
    test(`asked at ${c.age} ms of age: ${c.answered ? "answered" : "a miss"}${c.due ? ", read again in the background" : ""}`, () => {
      let clock = 0;
      const cache = new TtlCache<string, number>(1000, 10, () => clock);
      const due: string[] = [];
      cache.onDue((k) => due.push(k));
      cache.set("k", 1);
      clock = c.age;
      expect(cache.get("k")?.value).toBe(c.answered ? 1 : undefined);
      expect(due).toEqual(c.due ? ["k"] : []);
    });
  }

  test("told once while the read runs; the read's value lives a whole TTL again", async () => {
    let clock = 0;
    const cache = new TtlCache<string, number>(1000, 10, () => clock);
    let reads = 0;
    let finish!: (v: number) => void;
    cache.onDue((k) => {
      reads++;
      const read = new Promise<number>((r) => (finish = r));
      cache.track(k, read.then((v) => (cache.set(k, v), v)));
    });
    cache.set("k", 1);
    clock = 800;
    for (let i = 0; i < 5; i++) expect(cache.get("k")?.value).toBe(1);
    expect(reads).toBe(1);
    clock = 900;
    finish(2);
    await Promise.resolve();
    await Promise.resolve();
    clock = 1600; // past the first value's life, inside the second's
    expect(cache.get("k")?.value).toBe(2);
    expect(reads).toBe(1);
  });
});
