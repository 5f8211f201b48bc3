/**
 * A connect's device statement (InboxReader.openDevice) must cost a few index
 * probes per device, not a pass over every device ever seen: on PostgreSQL,
 * with large delivery_device, user_device, timeline_member and timeline
 * tables, both before any ANALYZE (a fresh deployment, a burst of new devices:
 * what a reconnect storm meets) and after it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDevicesQuery, type OpenRequest } from "../../src/delivery/inbox.ts";
import { explainPlan, freshStore, type TestStore } from "../support/stores.ts";

const N = 20_000;
const FRESH = 1n << 60n;
// Known devices (rows exist), a registered device never seen, and a stranger: every branch of the statement.
const REQS: OpenRequest[] = [
  ...Array.from({ length: 62 }, (_, i) => ({ userId: BigInt(1000 + i * 300), deviceId: "d", fresh: FRESH })),
  { userId: 1001n, deviceId: "new", fresh: FRESH },
  { userId: 9_999_999n, deviceId: "x", fresh: FRESH },
];

describe("openDevice probes by key [postgres]", () => {
  let ts: TestStore;
  beforeAll(async () => {
    ts = await freshStore("postgres");
    const run = (q: ReturnType<typeof sql>) => ts.store.db.execute(q);
    await run(sql`insert into delivery_device (user_id, device_id, floor_id) select 1000 + i, 'd', i from generate_series(0, ${N - 1}) i`);
    await run(sql`insert into user_device (user_id, device_id, device_type, status, created_at, last_seen_at)
      select 1000 + i, case when i = 1 then 'new' else 'd' end, 'desktop', 1, 1767225600000, 1767225600000 from generate_series(0, ${N - 1}) i`);
    await run(sql`insert into timeline_member (conv_id, user_id, join_seq) select 1 + i % 500, 1000 + i, 0 from generate_series(0, ${N - 1}) i`);
    await run(sql`insert into timeline (message_id, conv_id, seq) select i, 1 + i % 500, 1 + i / 500 from generate_series(1, ${5 * N}) i`);
    // C2C messages have no inbox rows: a device's are read from the row's sides (docs/delivery.md "C2C").
    await run(sql`insert into messages (id, client_id, chat_type, from_id, from_device, to_id, payload, server_ts)
      select ${10 * N} + i, 'C2C.' || i || '.1.r', 'C2C', 1000 + i % ${N}, 'd', 1000 + (i * 7 + 1) % ${N}, '{}', 0 from generate_series(1, ${5 * N}) i`);
  });
  afterAll(() => ts.dispose());

  const plan = () => explainPlan(ts.store, openDevicesQuery(REQS));
  const noScans = (text: string) => {
    for (const table of ["delivery_device", "user_device", "timeline_member", "timeline", "messages"]) {
      expect(text).not.toMatch(new RegExp(`Seq Scan on ${table}\\b`));
    }
    // A device's C2C by its user's side and the floor: one range of each per-side index.
    expect(text).toMatch(/messages_c2c_to_idx[^\n]*\n\s*Index Cond: \(\(to_id = [^\n]*\(id >= /);
    expect(text).toMatch(/messages_c2c_from_idx[^\n]*\n\s*Index Cond: \(\(from_id = [^\n]*\(id >= /);
    // Entries are found per span by (conv_id, seq), never by message_id across every group.
    expect(text).not.toMatch(/Index Cond: \(message_id >=/);
    // A message's mark is looked up by its whole key per message (a subplan), never the device's marks read and
    // joined afterwards (an anti join: with stale statistics, every mark of the device for each message walked).
    expect(text).toMatch(/delivery_mark[^\n]*\n\s*(Index Cond|Filter): \(\(user_id = [^\n]*\(device_id = [^\n]*\(message_id = /);
    expect(text).not.toMatch(/Anti Join/);
  };

  test("before ANALYZE", async () => {
    noScans(await plan());
  });

  test("after ANALYZE", async () => {
    await ts.store.db.execute(sql`analyze`);
    noScans(await plan());
  });

  test("the statement still answers for every branch", async () => {
    const rows = await ts.store.fixed<{ ord: bigint | number | string; status: number | null; pending: boolean }>(openDevicesQuery(REQS));
    expect(rows).toHaveLength(REQS.length);
    const byOrd = new Map(rows.map((r) => [Number(r.ord), r]));
    expect(byOrd.get(1)!.status).toBe(1);
    expect(byOrd.get(63)!.status).toBe(1); // registered, first seen now
    expect(byOrd.get(64)!.status).toBeNull(); // unknown device: no user_device row
    // The known devices' floors are old and their groups have entries above them without a cursor: pending.
    expect(byOrd.get(1)!.pending).toBe(true);
  });
});
