/**
 * The conversation list must not scan `messages`: on PostgreSQL, with a table
 * of many users' messages and fresh statistics, the planner reads a user's C2C
 * through the two partial indexes and C2G through each group's timeline index.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql, type SQL } from "drizzle-orm";
import { lastC2CQuery, lastC2GQuery } from "../../../src/domain/social/conversations.ts";
import { ID_EPOCH_MS } from "../../../src/ids/tsid.ts";
import { explainPlan, freshStore, type TestStore } from "../../support/stores.ts";

const USERS = 400;
const ME = 1001n;

describe("conversation/mine query plans [postgres]", () => {
  let ts: TestStore;
  beforeAll(async () => {
    ts = await freshStore("postgres");
    // 20 000 C2C among 400 users, 5 000 C2G in 200 groups; ME is in two groups.
    await ts.store.db.execute(sql`insert into messages (id, client_id, chat_type, from_id, to_id, payload, server_ts)
      select (1700000000000 + i - ${ID_EPOCH_MS}) << 22, 'C2C.' || i || '.1.r', 'C2C', 1000 + i % ${USERS}, 1000 + (i * 7 + 1) % ${USERS}, '{}',
        1700000000000 + i
      from generate_series(1, 20000) i`); // server ids minted at server_ts, as the node does
    await ts.store.db.execute(sql`insert into messages (id, client_id, chat_type, from_id, to_id, payload, server_ts)
      select 100000 + i, 'C2G.' || i || '.1.r', 'C2G', 1000 + i % ${USERS}, 5000 + i % 200, '{}', 1700000000000 + i
      from generate_series(1, 5000) i`);
    await ts.store.db.execute(sql`insert into im_group_member (group_id, user_id, joined_at)
      select 5000 + g, 1000 + u, 0 from generate_series(0, 199) g, generate_series(0, 9) u`);
    await ts.store.db.execute(sql`insert into im_group_member (group_id, user_id, joined_at) values (5000, ${ME}, 0), (5001, ${ME}, 0)
      on conflict do nothing`);
    await ts.store.db.execute(sql`insert into timeline (message_id, conv_id, seq)
      select id, to_id, row_number() over (partition by to_id order by id) from messages where chat_type = 'C2G'`);
    await ts.store.db.execute(sql`insert into timeline_member (conv_id, user_id, join_seq)
      select group_id, user_id, 0 from im_group_member`);
    await ts.store.db.execute(sql`analyze timeline`);
    await ts.store.db.execute(sql`analyze timeline_member`);
    await ts.store.db.execute(sql`analyze messages`);
    await ts.store.db.execute(sql`analyze im_group_member`);
  });
  afterAll(() => ts.dispose());

  const plan = (q: SQL) => explainPlan(ts.store, q);

  test.each([
    ["full list", undefined],
    ["incremental pull", 1700000019000],
  ])("C2C (%s): both partial indexes, no sequential scan of messages", async (_n, since) => {
    const text = await plan(lastC2CQuery(ME, since));
    expect(text).toContain("messages_c2c_from_idx");
    expect(text).toContain("messages_c2c_to_idx");
    expect(text).not.toMatch(/Seq Scan on messages/);
  });

  test("C2G: each group's timeline index, no sequential scan of messages", async () => {
    const text = await plan(lastC2GQuery(ME));
    expect(text).toContain("timeline_conv_seq_uq");
    expect(text).not.toMatch(/Seq Scan on timeline /);
    expect(text).not.toMatch(/Seq Scan on messages/);
  });

  test("the rows are right: ME's newest message per peer", async () => {
    const rows = await ts.store.rows<{ conv: unknown; server_ts: unknown }>(lastC2CQuery(ME));
    const direct = await ts.store.rows<{ n: unknown }>(sql`select count(distinct case when from_id = ${ME} then to_id else from_id end) as n
      from messages where chat_type = 'C2C' and (from_id = ${ME} or to_id = ${ME})`);
    expect(rows.length).toBe(Number(direct[0]!.n));
    expect(rows.length).toBeGreaterThan(1);
  });
});
