/**
 * The retention prune finds old inbox rows and marks through the message_id
 * indexes (src/db/schema/delivery.ts): on PostgreSQL, with many rows and fresh
 * statistics, its deletes below a floor read an index, never the whole table.
 * The statements are InboxReader.prune's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { lt, sql } from "drizzle-orm";
import { deliveryMarks, inbox } from "../../src/db/schema/index.ts";
import { InboxReader } from "../../src/delivery/inbox.ts";
import { explainPlan, freshStore, type TestStore } from "../support/stores.ts";

const ROWS = 200_000;

describe("retention prune reads the message_id indexes [postgres]", () => {
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

  test("the deletes below a floor use inbox_message_idx and delivery_mark_message_idx", async () => {
    const floor = 1000n;
    for (const [table, index] of [[inbox, "inbox_message_idx"], [deliveryMarks, "delivery_mark_message_idx"]] as const) {
      const text = await explainPlan(ts.store, ts.store.db.delete(table).where(lt(table.messageId, floor)).getSQL());
      expect(text).toMatch(new RegExp(`(Index Scan using|Bitmap Index Scan on) ${index}`));
      expect(text).not.toMatch(/Seq Scan/);
    }
  });

  test("a prune below every id deletes nothing and leaves the rows", async () => {
    expect(await new InboxReader(ts.store).prune(0)).toBe(0);
    const [n] = await ts.store.rows<{ inbox: number; marks: number }>(sql`select
      (select count(*) from inbox)::int as inbox, (select count(*) from delivery_mark)::int as marks`);
    expect(n).toEqual({ inbox: ROWS, marks: ROWS });
  });
});
