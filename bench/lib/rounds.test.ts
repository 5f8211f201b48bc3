import { describe, expect, test } from "bun:test";
import { alternate, medianRound, ratios } from "./rounds.ts";

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
});
