import { describe, expect, test } from "bun:test";
import { WindowLimiter } from "../../../src/domain/auth/throttle.ts";

describe("WindowLimiter", () => {
  test("limit per key per window, reset when the window turns", () => {
    let t = 1_000;
    const lim = new WindowLimiter(2, 60_000, () => t);
    expect([lim.take("a"), lim.take("a"), lim.take("a")]).toEqual([true, true, false]);
    expect(lim.take("b")).toBe(true);
    t += 59_999;
    expect(lim.take("a")).toBe(false);
    t += 1;
    expect(lim.take("a")).toBe(true);
  });

  test("off lifts it", () => {
    const lim = new WindowLimiter(1, 60_000, () => 0, true);
    expect([lim.take("a"), lim.take("a"), lim.take("a")]).toEqual([true, true, true]);
  });
});
