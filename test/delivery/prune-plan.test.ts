/**
 * The retention prune finds old inbox rows and marks through the BRIN indexes
 * on message_id (src/db/schema/delivery.ts): on PostgreSQL, with many rows in
 * id order and fresh statistics, its deletes read a bitmap of those indexes,
 * never the whole table. The statements are InboxReader.prune's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { lt, sql } from "drizzle-orm";
import { deliveryMarks, inbox } from "../../src/db/schema/index.ts";
import { InboxReader } from "../../src/delivery/inbox.ts";
import { explainPlan, freshStore, type TestStore } from "../support/stores.ts";

const ROWS = 200_000;

describe("retention prune uses the BRIN indexes [postgres]", () => {
  let ts: TestStore;
  beforeAll(async () => {
    ts = await freshStore("postgres");
    await ts.store.db.execute(sql`insert into inbox (user_id, message_id) select 1000 + i % 400, i from generate_series(1, ${ROWS}) i`);
    await ts.store.db.execute(
      sql`insert into delivery_mark (user_id, device_id, message_id) select 1000 + i % 400, 'd', i from generate_series(1, ${ROWS}) i`,
    );
    await ts.store.db.execute(sql`analyze inbox`);
    await ts.store.db.execute(sql`analyze delivery_mark`);
  });
  afterAll(() => ts.dispose());

  test("both message_id indexes are BRIN", async () => {
    const rows = await ts.store.rows<{ name: string; am: string }>(sql`select c.relname as name, a.amname as am
      from pg_class c join pg_am a on a.oid = c.relam where c.relname in ('inbox_message_idx', 'delivery_mark_message_idx') order by 1`);
    expect(rows).toEqual([
      { name: "delivery_mark_message_idx", am: "brin" },
      { name: "inbox_message_idx", am: "brin" },
    ]);
  });

  test("the deletes below a floor read the indexes, once prune summarised the new ranges", async () => {
    // prune() summarises first (a floor below every id deletes nothing, so the rows stay for the plans): nothing
    // is left to summarise after it, where the inserts above left several page ranges unsummarised.
    expect(await new InboxReader(ts.store).prune(0)).toBe(0);
    const left = await ts.store.rows<{ inbox: number; marks: number }>(sql`select
      brin_summarize_new_values('inbox_message_idx'::regclass)::int as inbox,
      brin_summarize_new_values('delivery_mark_message_idx'::regclass)::int as marks`);
    expect(left).toEqual([{ inbox: 0, marks: 0 }]);
    const floor = 1000n;
    for (const [table, index] of [[inbox, "inbox_message_idx"], [deliveryMarks, "delivery_mark_message_idx"]] as const) {
      const text = await explainPlan(ts.store, ts.store.db.delete(table).where(lt(table.messageId, floor)).getSQL());
      expect(text).toContain(`Bitmap Index Scan on ${index}`);
      expect(text).not.toMatch(/Seq Scan/);
    }
  });
});
