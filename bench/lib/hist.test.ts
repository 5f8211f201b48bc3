import { describe, expect, test } from "bun:test";
import { Histogram } from "./hist.ts";

describe("Histogram", () => {
  test("exact below 128 µs", () => {
    const h = new Histogram();
    for (let v = 1; v <= 100; v++) h.record(v);
    expect(h.percentile(50)).toBe(50);
    expect(h.percentile(99)).toBe(99);
    expect(h.percentile(100)).toBe(100);
  });

  test.each([1_000, 12_345, 1_000_000, 60_000_000])("within 1.6 %% at %p µs", (v) => {
    const h = new Histogram();
    h.record(v);
    expect(Math.abs(h.percentile(50) - v) / v).toBeLessThan(0.016);
  });

  test("percentiles of a spread, and merge equals recording into one", () => {
    const a = new Histogram();
    const b = new Histogram();
    const all = new Histogram();
    for (let i = 0; i < 10_000; i++) {
      const v = i < 9_900 ? 500 : 50_000; // 1 % slow tail
      (i % 2 ? a : b).record(v);
      all.record(v);
    }
    const merged = Histogram.from([a.snapshot(), b.snapshot()]);
    expect(merged.summary()).toEqual(all.summary());
    expect(Math.abs(merged.percentile(99) - 500) / 500).toBeLessThan(0.016);
    expect(Math.abs(merged.percentile(99.9) - 50_000) / 50_000).toBeLessThan(0.016);
  });

  test("reset empties it: what was recorded before counts for nothing after", () => {
    const h = new Histogram();
    for (const v of [5, 500, 50_000]) h.record(v);
    h.reset();
    expect(h.summary()).toEqual(new Histogram().summary());
    h.record(7);
    expect(h.summary()).toMatchObject({ count: 1, min_us: 7, max_us: 7, p50_us: 7, p99_us: 7 });
  });

  test("empty summary is zeros", () => {
    expect(new Histogram().summary().p99_us).toBe(0);
  });
});
