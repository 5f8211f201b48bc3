/**
 * Compaction's floors and group entries (InboxReader.compact, docs/delivery.md
 * "Compaction"): a floor never passes a pending entry, even one numbered after
 * the first pending entry of its group but minted before it, and a device's
 * groups cost one probe per span, not a read of its backlog. Nodes sharing a
 * database take turns: one prunes or compacts, the others skip. Only floors
 * that move are written.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openStore } from "../../src/db/store.ts";
import { compactFloorsQuery, InboxReader, JOB_LOCKS, SETTLE_MS } from "../../src/delivery/inbox.ts";
import { idFloorForTime } from "../../src/ids/tsid.ts";
import { explainPlan, freshStore, storeKinds, type TestStore } from "../support/stores.ts";

const T = Date.UTC(2026, 10, 28, 12);
const idAt = (ms: number, low = 0n) => idFloorForTime(ms) + low;
/** Device `d` of `user`: its floor. */
const floorOf = async (ts: TestStore, user: number) =>
  BigInt((await ts.store.rows<{ f: string }>(sql`select floor_id::text as f from delivery_device where user_id = ${user} and device_id = 'd'`))[0]!.f);

for (const kind of storeKinds()) {
  describe(`compaction and group entries [${kind}]`, () => {
    let ts: TestStore;
    beforeAll(async () => {
      ts = await freshStore(kind);
    });
    afterAll(() => ts.dispose());

    test("the floor stays under every pending entry, one minted before its group's first pending entry but numbered after it included", async () => {
      const run = (q: ReturnType<typeof sql>) => ts.store.db.execute(q);
      await run(sql`insert into delivery_device (user_id, device_id, floor_id) values (1, 'd', 0), (2, 'd', 0), (3, 'd', 0), (4, 'd', ${idAt(T - 60_000)})`);
      // User 1: group 7, entry 1 minted at T, entry 2 minted 5 min earlier and committed later (a slow batch).
      // User 2: group 8, entry 1 acknowledged by the cursor, entry 2 past a hole (in `above`), entry 3 pending.
      // User 3: no group; the floor goes up to the settled bound.
      // User 4: group 9's pending entry a minute above the device's floor: the bound under it is under the floor.
      await run(sql`insert into timeline_member (conv_id, user_id, join_seq) values (7, 1, 0), (8, 2, 0), (9, 4, 0)`);
      await run(sql`insert into timeline (message_id, conv_id, seq) values
        (${idAt(T, 5n)}, 7, 1), (${idAt(T - 5 * 60_000, 9n)}, 7, 2),
        (${idAt(T - 60_000)}, 8, 1), (${idAt(T - 30_000)}, 8, 2), (${idAt(T + 60_000)}, 8, 3), (${idAt(T, 1n)}, 9, 1)`);
      await run(sql`insert into timeline_cursor (user_id, device_id, conv_id, seq, above) values (2, 'd', 8, 1, '{[2,3)}')`);
      const settled = T + 60 * 60_000;
      const version = async (user: number) => (await ts.store.rows<{ v: string }>(sql`select xmin::text as v from delivery_device where user_id = ${user}`))[0]!.v;
      const before = await version(4);
      await new InboxReader(ts.store).compact(settled);
      expect(await floorOf(ts, 1)).toBe(idAt(T - SETTLE_MS)); // below entry 2 (T − 5 min), which stays pending
      expect(await floorOf(ts, 1) <= idAt(T - 5 * 60_000, 9n)).toBe(true);
      expect(await floorOf(ts, 2)).toBe(idAt(T + 60_000 - SETTLE_MS)); // entries 1 and 2 acknowledged: entry 3 holds it
      expect(await floorOf(ts, 3)).toBe(idFloorForTime(settled));
      expect(await floorOf(ts, 4)).toBe(idAt(T - 60_000)); // never down (older messages would be pending again)
      expect(await version(4)).toBe(before); // a floor that does not move is not written
      // Once the entries are acknowledged, the floors move on to the settled bound.
      await run(sql`insert into timeline_cursor (user_id, device_id, conv_id, seq) values (1, 'd', 7, 2)`);
      await run(sql`update timeline_cursor set seq = 3, above = '{}' where user_id = 2`);
      await new InboxReader(ts.store).compact(settled);
      expect([await floorOf(ts, 1), await floorOf(ts, 2)]).toEqual([idFloorForTime(settled), idFloorForTime(settled)]);
    });
  });
}

describe("compaction probes each span's first pending entry [postgres]", () => {
  const N = 20_000;
  let ts: TestStore;
  beforeAll(async () => {
    ts = await freshStore("postgres");
    const run = (q: ReturnType<typeof sql>) => ts.store.db.execute(q);
    await run(sql`insert into delivery_device (user_id, device_id, floor_id) select 1000 + i, 'd', 0 from generate_series(0, ${N - 1}) i`);
    await run(sql`insert into timeline_member (conv_id, user_id, join_seq) select 1 + i % 500, 1000 + i, 0 from generate_series(0, ${N - 1}) i`);
    await run(sql`insert into timeline (message_id, conv_id, seq) select i, 1 + i % 500, 1 + i / 500 from generate_series(1, ${5 * N}) i`);
    await run(sql`analyze`);
  });
  afterAll(() => ts?.dispose());

  test("entries by (conv_id, seq), one each (a limit), never a scan of the timeline", async () => {
    const text = await explainPlan(ts.store, compactFloorsQuery(idFloorForTime(T)));
    expect(text).toMatch(/Limit[^\n]*\n[^\n]*Index Scan using timeline_conv_seq_uq on timeline/);
    expect(text).not.toMatch(/Seq Scan on timeline\b/);
  });
});

describe("nodes sharing a database take turns at the prune and the compaction [postgres]", () => {
  let ts: TestStore;
  beforeAll(async () => {
    ts = await freshStore("postgres");
  });
  afterAll(() => ts?.dispose());

  /** Another node's job under way: its lock held in a transaction until `release`. */
  async function held(key: number): Promise<{ release(): Promise<void> }> {
    const other = await openStore({ url: ts.url, poolSize: 1, migrate: false });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const taken = new Promise<void>((r) => (locked = r));
    const tx = other.db.transaction(async (t) => {
      await t.execute(sql`select pg_advisory_xact_lock(${key})`);
      locked();
      await gate;
    });
    await taken;
    return { release: async () => (release(), await tx, await other.close()) };
  }

  test("a node that finds the job running skips its turn (no wait, nothing done), and does it next time", async () => {
    const reader = new InboxReader(ts.store);
    await ts.store.db.execute(sql`insert into delivery_device (user_id, device_id, floor_id) values (1, 'd', 0)`);
    await ts.store.db.execute(sql`insert into messages (id, client_id, chat_type, from_id, to_id, payload, server_ts)
      values (${idAt(T - 60_000)}, 'C2C.1.1.r', 'C2C', 5, 6, '{}', 0)`);

    const compacting = await held(JOB_LOCKS.compact);
    await reader.compact(T); // returns while the other node holds the job (a wait would time the test out)
    expect(await floorOf(ts, 1)).toBe(0n);
    await compacting.release();
    await reader.compact(T);
    expect(await floorOf(ts, 1)).toBe(idFloorForTime(T));

    const pruning = await held(JOB_LOCKS.prune);
    expect(await reader.prune(T)).toBe(0);
    await pruning.release();
    expect(await reader.prune(T)).toBe(1);
  });
});
