import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { DeadlineHeap, type Deadlined } from "../../src/ws/expiry.ts";
import { nextSeq } from "../../src/ws/heartbeat.ts";

describe("deadline heap (pure)", () => {
  test("pops due items in deadline order, none early, after moves and removals", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.integer({ min: 0, max: 1000 }), moveTo: fc.option(fc.integer({ min: 0, max: 1000 })), drop: fc.boolean() })),
        fc.integer({ min: 0, max: 1000 }),
        (ops, now) => {
          const h = new DeadlineHeap<Deadlined>();
          const items = ops.map((o) => ({ deadline: o.at, heapIndex: -1 }));
          items.forEach((it) => h.schedule(it));
          ops.forEach((o, i) => {
            if (o.moveTo !== null) {
              items[i]!.deadline = o.moveTo;
              h.schedule(items[i]!);
            }
          });
          ops.forEach((o, i) => o.drop && h.remove(items[i]!));
          const kept = items.filter((_, i) => !ops[i]!.drop);
          const out: number[] = [];
          for (let e = h.popDue(now); e; e = h.popDue(now)) out.push(e.deadline);
          expect(out).toEqual(kept.map((k) => k.deadline).filter((d) => d <= now).sort((a, b) => a - b));
          expect(h.size).toBe(kept.length - out.length);
          expect(items.filter((it) => it.heapIndex >= 0)).toHaveLength(h.size);
        },
      ),
    );
  });
});

test("heartbeat Seq wraps at 65535", () => {
  expect(nextSeq(0)).toBe(1);
  expect(nextSeq(65534)).toBe(65535);
  expect(nextSeq(65535)).toBe(0);
});
