import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { Conn } from "../../src/ws/conn.ts";
import { DeadlineHeap } from "../../src/ws/expiry.ts";
import { nextSeq } from "../../src/ws/heartbeat.ts";

describe("deadline heap (pure)", () => {
  test("pops due entries in deadline order, none early", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1000 })), fc.integer({ min: 0, max: 1000 }), (ats, now) => {
        const h = new DeadlineHeap();
        for (const at of ats) h.push(at, {} as Conn);
        const out: number[] = [];
        for (let e = h.popDue(now); e; e = h.popDue(now)) out.push(e.at);
        expect(out).toEqual(ats.filter((a) => a <= now).sort((a, b) => a - b));
        expect(h.size).toBe(ats.length - out.length);
      }),
    );
  });
});

test("heartbeat Seq wraps at 65535", () => {
  expect(nextSeq(0)).toBe(1);
  expect(nextSeq(65534)).toBe(65535);
  expect(nextSeq(65535)).toBe(0);
});
