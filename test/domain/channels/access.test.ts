import { describe, expect, test } from "bun:test";
import { decide, mayAssign, STRANGER, tupleKind, type AccessTuple, type ChannelOp, type Relation } from "../../../src/domain/channels/access.ts";
import { searchQuery } from "../../../src/domain/channels/channels.ts";
import { nowMicros, rfc3339Micro } from "../../../src/domain/channels/json.ts";
import { paymentProvider } from "../../../src/domain/channels/payments.ts";
import { ViewDedupe } from "../../../src/domain/channels/views.ts";

const t = (v: number | null, a: number | null, j: number | null): AccessTuple => ({ visibility: v, accessType: a, joinPolicy: j });

const TUPLES: Record<string, AccessTuple> = {
  "0/0/0": t(0, 0, 0),
  "1/0/1": t(1, 0, 1),
  "0/1/3": t(0, 1, 3),
  "1/1/3": t(1, 1, 3),
  "1/1/1": t(1, 1, 1),
  missing: t(null, null, null),
};

/** Columns of every pattern below. */
const ACTORS: [string, Relation][] = [
  ["outsider", STRANGER],
  ["subscriber", { ...STRANGER, subscribed: true }],
  ["purchaser", { ...STRANGER, purchased: true }],
  ["invitee", { ...STRANGER, invited: true }],
  ["admin1", { ...STRANGER, role: 1 }],
  ["admin2", { ...STRANGER, role: 2 }],
  ["admin3", { ...STRANGER, role: 3 }],
  ["creator", { ...STRANGER, creator: true }],
];

// A allow · H hidden (answered "channel not found") · D denied. Columns: ACTORS in order.
//                      0/0/0       1/0/1       0/1/3       1/1/3       1/1/1       missing
const EXPECTED: Record<ChannelOp, [string, string, string, string, string, string]> = {
  see: ["AAAAAAAA", "HAAAAAAA", "AAAAAAAA", "HAAAAAAA", "HHHHAAAA", "HHHHAAAA"],
  read: ["AAAAAAAA", "HADDAAAA", "DAADAAAA", "HDADAAAA", "HHHHDDDD", "HHHHDDDD"],
  subscribe: ["AAAAAAAA", "HADAAAAA", "DAADAAAA", "HAADAAAA", "HHHHDDDD", "HHHHDDDD"],
  purchase: ["DDDDDDDD", "HDDDDDDD", "AAAAAAAA", "HDDADDDD", "HHHHDDDD", "HHHHDDDD"],
  publish: ["DDDDAAAA", "HDDDAAAA", "DDDDAAAA", "HDDDAAAA", "HHHHAAAA", "HHHHAAAA"],
  edit_any: ["DDDDAADA", "HDDDAADA", "DDDDAADA", "HDDDAADA", "HHHHAADA", "HHHHAADA"],
  update: ["DDDDAADA", "HDDDAADA", "DDDDAADA", "HDDDAADA", "HHHHAADA", "HHHHAADA"],
  invite: ["DDDDAADA", "HDDDAADA", "DDDDAADA", "HDDDAADA", "HHHHAADA", "HHHHAADA"],
  manage_subscribers: ["DDDDAADA", "HDDDAADA", "DDDDAADA", "HDDDAADA", "HHHHAADA", "HHHHAADA"],
  manage_admins: ["DDDDADDA", "HDDDADDA", "DDDDADDA", "HDDDADDA", "HHHHADDA", "HHHHADDA"],
  delete: ["DDDDDDDA", "HDDDDDDA", "DDDDDDDA", "HDDDDDDA", "HHHHDDDA", "HHHHDDDA"],
  stats: ["DDDDAAAA", "HDDDAAAA", "DDDDAAAA", "HDDDAAAA", "HHHHAAAA", "HHHHAAAA"],
  list_admins: ["AAAAAAAA", "HADDAAAA", "DAADAAAA", "HDADAAAA", "HHHHAAAA", "HHHHAAAA"],
};

const LETTER = { allow: "A", hidden: "H", denied: "D" } as const;

describe("channel access (§2.6)", () => {
  test("the four tuples are the only ones recognised", () => {
    expect(Object.entries(TUPLES).map(([k, v]) => [k, tupleKind(v)])).toEqual([
      ["0/0/0", "public_free"],
      ["1/0/1", "private_free"],
      ["0/1/3", "public_paid"],
      ["1/1/3", "private_paid"],
      ["1/1/1", undefined],
      ["missing", undefined],
    ]);
    for (const v of [0, 1, 2, 3, null]) for (const a of [0, 1, 2, null]) for (const j of [0, 1, 2, 3, null]) {
      const known = ["0/0/0", "1/0/1", "0/1/3", "1/1/3"].includes(`${v}/${a}/${j}`);
      expect(tupleKind(t(v, a, j)) !== undefined).toBe(known);
    }
  });

  for (const [op, row] of Object.entries(EXPECTED)) {
    test(`${op}: every tuple × every actor`, () => {
      const got = Object.values(TUPLES).map((tuple) => ACTORS.map(([, rel]) => LETTER[decide(tuple, rel, op as ChannelOp)]).join(""));
      expect(got).toEqual(row);
    });
  }

  test("any other tuple fails closed: every content op denied or hidden, for every relation mix", () => {
    const bits = [false, true];
    for (const tuple of [t(2, 0, 0), t(0, 0, 1), t(1, 0, 0), t(0, 1, 0), t(1, 1, 0), t(null, 0, 0), t(0, null, 0), t(0, 0, null)]) {
      for (const subscribed of bits) for (const purchased of bits) for (const invited of bits) {
        const rel = { ...STRANGER, subscribed, purchased, invited };
        for (const op of ["see", "read", "subscribe", "purchase"] as const) expect(decide(tuple, rel, op)).not.toBe("allow");
      }
    }
  });

  test("admin roles: the creator assigns any; role 1 only roles below it; others none", () => {
    const [, , , , a1, a2, a3, creator] = ACTORS.map(([, r]) => r);
    expect([1, 2, 3].map((r) => mayAssign(creator!, r as 1 | 2 | 3))).toEqual([true, true, true]);
    expect([1, 2, 3].map((r) => mayAssign(a1!, r as 1 | 2 | 3))).toEqual([false, true, true]);
    expect([1, 2, 3].map((r) => mayAssign(a2!, r as 1 | 2 | 3))).toEqual([false, false, false]);
    expect([1, 2, 3].map((r) => mayAssign(a3!, r as 1 | 2 | 3))).toEqual([false, false, false]);
  });
});

describe("channel helpers", () => {
  test("RFC 3339 with microseconds", () => {
    expect(rfc3339Micro(1_795_594_070_877_042n)).toBe("2026-11-25T08:07:50.877042Z");
    expect(rfc3339Micro(1_795_594_070_000_000n)).toBe("2026-11-25T08:07:50.000000Z");
    const us = nowMicros(1_795_594_070_877);
    expect(us / 1000n).toBe(1_795_594_070_877n);
    expect(rfc3339Micro(us)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  });

  test("search query: prefix per word, operators dropped", () => {
    expect(searchQuery("rocket news")).toBe("'rocket':* & 'news':*");
    expect(searchQuery("a&b | !c")).toBe("'ab':* & 'c':*");
    expect(searchQuery("  ")).toBeUndefined();
    expect(searchQuery("'):*")).toBeUndefined();
  });

  test("payment provider: dev outside production; in production only when configured", () => {
    expect(paymentProvider("auto", "development")?.name).toBe("dev");
    expect(paymentProvider("auto", "test")?.name).toBe("dev");
    expect(paymentProvider("auto", "production")).toBeUndefined();
    expect(paymentProvider("none", "development")).toBeUndefined();
    expect(paymentProvider("dev", "production")?.name).toBe("dev");
  });

  test("view dedupe: once per user and message inside the window, bounded", () => {
    let now = 0;
    const d = new ViewDedupe(() => now, 1000, 2);
    expect(d.first(1n, 10n)).toBe(true);
    expect(d.first(1n, 10n)).toBe(false);
    expect(d.first(2n, 10n)).toBe(true);
    now = 1000;
    expect(d.first(1n, 10n)).toBe(true); // window over
    expect(d.first(3n, 10n)).toBe(true); // evicts the oldest (2:10)
    expect(d.first(2n, 10n)).toBe(true);
  });
});
