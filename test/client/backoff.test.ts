import { describe, expect, test } from "bun:test";
import { backoffBase, backoffDelay, BACKOFF_MAX_MS } from "../../src/client/backoff.ts";

describe("reconnect back-off (§8, pure)", () => {
  const table: [number, number][] = [
    [0, 0],
    [1, 1_000],
    [2, 2_000],
    [3, 5_000],
    [4, 10_000],
    [5, 20_000],
    [6, 40_000],
    [7, 60_000],
    [8, 60_000],
    [50, 60_000],
  ];
  for (const [attempt, base] of table) {
    test(`attempt ${attempt}: ${base} ms ± 20 %`, () => {
      expect(backoffBase(attempt)).toBe(base);
      expect(backoffDelay(attempt, () => 0.5)).toBe(base);
      const low = backoffDelay(attempt, () => 0);
      const high = backoffDelay(attempt, () => 0.999999);
      expect(low).toBe(Math.round(base * 0.8));
      expect(high).toBe(Math.min(BACKOFF_MAX_MS, Math.round(base * 1.199999)));
      expect(high).toBeLessThanOrEqual(BACKOFF_MAX_MS);
    });
  }
});
