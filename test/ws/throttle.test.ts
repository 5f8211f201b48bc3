import { describe, expect, test } from "bun:test";
import { fullBucket, takeToken, UserThrottles, WindowCounter } from "../../src/ws/throttle.ts";

describe("token bucket (pure, fake clock)", () => {
  test("burst, then refill at the rate, capped at the burst", () => {
    const b = fullBucket(3, 0);
    expect([0, 0, 0, 0].map((t) => takeToken(b, t, 2, 3))).toEqual([true, true, true, false]);
    expect(takeToken(b, 499, 2, 3)).toBe(false); // 0.998 tokens
    expect(takeToken(b, 500, 2, 3)).toBe(true); // 1 token after 500 ms at 2/s
    expect(takeToken(b, 500, 2, 3)).toBe(false);
    const later = 1_000_000;
    expect([0, 0, 0, 0].map(() => takeToken(b, later, 2, 3))).toEqual([true, true, true, false]);
  });
  test("a clock going backwards never adds tokens", () => {
    const b = fullBucket(1, 1000);
    expect(takeToken(b, 1000, 1, 1)).toBe(true);
    expect(takeToken(b, 0, 1, 1)).toBe(false);
  });
});

describe("window counter (pure, fake clock)", () => {
  test("limit per key per window, new window resets, prune drops ended windows", () => {
    const c = new WindowCounter(2, 10_000);
    expect([c.hit("a", 0), c.hit("a", 1), c.hit("a", 2), c.hit("b", 2)]).toEqual([true, true, false, true]);
    expect(c.hit("a", 9_999)).toBe(false);
    expect(c.hit("a", 10_000)).toBe(true);
    c.prune(12_000);
    expect(c.size).toBe(1); // "b" (started at 2) ended; "a" restarted at 10 000
    c.prune(20_000);
    expect(c.size).toBe(0);
  });
});

describe("per-user throttles (pure, fake clock)", () => {
  const limits = { messages: { rate: 2, burst: 2 }, bytes: { rate: 100, burst: 100 }, acks: { rate: 10, burst: 10 } };
  test("message and byte buckets are taken together; a refusal spends neither", () => {
    const u = new UserThrottles(limits);
    expect(u.message(1n, 60, 0)).toBe(true);
    expect(u.message(1n, 60, 0)).toBe(false); // 40 bytes left: refused, the message token kept
    expect(u.message(1n, 40, 0)).toBe(true);
    expect(u.message(1n, 0, 0)).toBe(false); // no message token left
    expect(u.message(2n, 100, 0)).toBe(true); // another user: own buckets
  });
  test("kept until refilled, then swept: memory holds only users within their refill horizon", () => {
    const u = new UserThrottles(limits);
    for (let i = 0n; i < 1000n; i++) u.message(i, 1, 0);
    u.ack(5000n, 0);
    expect(u.size).toBe(1001);
    u.sweep(400); // messages refill in 0.5 s (one token at 2/s), acks in 0.1 s
    expect(u.size).toBe(1000);
    u.sweep(500);
    expect(u.size).toBe(0);
  });
});
