import { describe, expect, test } from "bun:test";
import { batch, MAX_PAGE_SIZE, paged, parsePage } from "../../src/http/paging.ts";

describe("parsePage (spec §2.1.6)", () => {
  test.each([
    [{}, 1, 20],
    [{ page: 0, size: 0 }, 1, 20],
    [{ page: -5, size: -1 }, 1, 20],
    [{ page: "3", size: "50" }, 3, 50],
    [{ page: " 2 ", size: " 7 " }, 2, 7],
    [{ page: "x", size: "y" }, 1, 20],
    [{ page: 2.9, size: 10.2 }, 2, 10],
    [{ page: 1, size: 1000 }, 1, 1000],
    [{ page: 1, size: 1001 }, 1, MAX_PAGE_SIZE],
    [{ page: 1, size: "999999" }, 1, MAX_PAGE_SIZE],
    [{ page: Number.NaN, size: Infinity }, 1, 20],
    [{ page: null, size: undefined }, 1, 20],
  ] as [Record<string, unknown>, number, number][])("%j → page %d size %d", (input, page, size) => {
    const p = parsePage(input);
    expect(p).toEqual({ page, size, offset: (page - 1) * size });
  });

  test("an endpoint's own default size", () => {
    expect(parsePage({}, 10).size).toBe(10);
  });

  test("answer shape has no has_more", () => {
    expect(paged(parsePage({ page: 2, size: 2 }), 5, ["c", "d"])).toEqual({ total: 5, page: 2, size: 2, list: ["c", "d"] });
  });

  test("batch splits successes from failures in order", async () => {
    const r = await batch([1n, 2n, 3n], async (id) => (id === 2n ? "not found" : undefined));
    expect(r).toEqual({ success: [1n, 3n], failed: [{ id: 2n, error: "not found" }] });
  });
});
