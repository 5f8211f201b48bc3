import { expect, test } from "bun:test";
import type { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { users } from "../../src/db/schema/index.ts";
import { freshStore } from "../support/stores.ts";

test("PGlite: drizzle queries read raw-text types as drizzle asks, without copying the parser table per query", async () => {
  const { store, dispose } = await freshStore("pglite");
  try {
    const client = (store.db as unknown as { $client: PGlite & { parsers: Record<number, unknown> } }).$client;
    let copies = 0;
    // A per-query `{...parsers, ...mine}` enumerates the table's keys: count that.
    client.parsers = new Proxy(client.parsers, {
      ownKeys(t) {
        copies++;
        return Reflect.ownKeys(t);
      },
    });
    const [row] = await store.rows<{ ts: unknown; day: unknown; n: unknown }>(
      sql`select '2026-01-02 03:04:05'::timestamp as ts, '2026-01-02'::date as day, 5::int as n`,
    );
    expect(row).toEqual({ ts: "2026-01-02 03:04:05", day: "2026-01-02", n: 5 }); // timestamps stay text, ints parse
    expect(await store.db.select({ id: users.id }).from(users).limit(1)).toEqual([]);
    const inTx = await store.db.transaction(async (tx) => tx.execute(sql`select '01:02:03'::interval as i`));
    expect((inTx as unknown as { rows: unknown[] }).rows).toEqual([{ i: "01:02:03" }]);
    expect(copies).toBe(0);
  } finally {
    await dispose();
  }
});
