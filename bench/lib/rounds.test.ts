import { describe, expect, test } from "bun:test";
import { Histogram } from "./hist.ts";
import type { Round } from "./measure.ts";
import { alternate, medianRound, pairedTable, ratios, smallStreamOf } from "./rounds.ts";

describe("rounds", () => {
  test("alternates baseline and subject, and a failing Ibis side becomes a note", async () => {
    const order: string[] = [];
    const notes: string[] = [];
    const out = await alternate(
      [
        { name: "base", kind: "baseline", run: async (r) => (order.push(`base${r}`), { rate: 100 + r }) },
        { name: "ibis", kind: "ibis", run: async (r) => (order.push(`ibis${r}`), { rate: 50 }) },
        { name: "broken", kind: "ibis", run: async () => Promise.reject(new Error("501")) },
      ],
      2,
      notes,
    );
    expect(order).toEqual(["base0", "ibis0", "base1", "ibis1"]);
    expect(Object.keys(out)).toEqual(["base", "ibis"]);
    expect(notes[0]).toContain("broken failed in round 1: 501");
  });

  test("swap: the compared subjects take turns to go first, the baseline stays first", async () => {
    const order: string[] = [];
    const subject = (name: string, kind: "baseline" | "ibis") => ({ name, kind, run: async (r: number) => (order.push(`${name}${r}`), r) });
    await alternate([subject("base", "baseline"), subject("a", "ibis"), subject("b", "ibis")], 3, [], true);
    expect(order).toEqual(["base0", "a0", "b0", "base1", "b1", "a1", "base2", "a2", "b2"]);
  });

  test("pairedTable: each round's two values and their ratio, the measures beside, then the medians", () => {
    const a = [{ r: 100, k: 2 }, { r: 200, k: 3 }, { r: 50, k: 4 }];
    const b = [{ r: 110, k: 1 }, { r: 180, k: 2 }, { r: 60, k: 5 }, { r: 999, k: 9 }]; // a round a lacks is left out
    const t = pairedTable(a, b, ["old", "new"], [["rate", (x) => x.r], ["kb", (x) => x.k]], "t");
    expect(t.columns).toEqual(["round", "old rate", "new rate", "new / old", "old kb", "new kb"]);
    expect(t.rows).toEqual([
      [1, 100, 110, 1.1, 2, 1],
      [2, 200, 180, 0.9, 3, 2],
      [3, 50, 60, 1.2, 4, 5],
      ["median", 100, 110, 1.1, 3, 2],
    ]);
  });

  test("a failing baseline fails the run", async () => {
    await expect(alternate([{ name: "b", kind: "baseline", run: async () => Promise.reject(new Error("x")) }], 1)).rejects.toThrow("x");
  });

  test("ratio is the median of per-round ratios", () => {
    const r = ratios({ base: [{ v: 100 }, { v: 50 }, { v: 100 }], ibis: [{ v: 50 }, { v: 40 }, { v: 60 }] }, "base", (x) => x.v);
    expect(r.ibis!.per_round).toEqual([0.5, 0.8, 0.6]);
    expect(r.ibis!.ratio).toBe(0.6);
    expect(r.ibis!.ratio_of_medians).toBe(0.5);
    expect(medianRound([{ v: 3 }, { v: 1 }, { v: 2 }], (x) => x.v)).toEqual({ v: 2 });
  });

  test("the small stream's p99 is over every round's messages, not the round of median MB/s", () => {
    // Three rounds of 200 small messages: two with a slow tail of 5 at 40 ms, the median-MB/s one without.
    const round = (mbps: number, slow: number): Round => {
      const h = new Histogram();
      for (let i = 0; i < 200 - slow; i++) h.record(2_000);
      for (let i = 0; i < slow; i++) h.record(40_000);
      const own = h.summary().p99_us / 1000;
      return { clients: [{ mb_per_s: mbps, small_p99_ms: own, small_ack_p99_ms: own - 1, small_hist: h.snapshot() }] } as unknown as Round;
    };
    const rounds = [round(100, 5), round(120, 0), round(140, 5)];
    expect(medianRound(rounds, (r) => Number(r.clients[0]!.mb_per_s)).clients[0]!.small_p99_ms).toBeLessThan(3);
    const s = smallStreamOf(rounds)!;
    expect(s.p99).toBeGreaterThan(35); // 10 of 600 messages at 40 ms: over 1 %
    expect(s.perRound.split(" / ")).toHaveLength(3);
    expect(s.ackP99).toBeGreaterThan(35); // the median of the rounds' own
    expect(smallStreamOf([{ clients: [{ mb_per_s: 1 }] } as unknown as Round])).toBeUndefined();
  });
});
