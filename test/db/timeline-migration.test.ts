/**
 * The upgrade to timelines (drizzle/*_timeline_*.sql): a database filled at the
 * previous schema — group messages as per-member inbox rows and per-device
 * marks — keeps exactly the same pending set for every device after the
 * migration, and the devices' cursors go on from there. Both stores.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { migrate } from "../../src/db/migrate.ts";
import { migrations } from "../../src/db/migrations.gen.ts";
import { deliveryDevices, deliveryMarks, groupMembers, groups, inbox, messages } from "../../src/db/schema/index.ts";
import { openStore, type Store } from "../../src/db/store.ts";
import { InboxReader } from "../../src/delivery/inbox.ts";
import { writeMarks } from "../../src/delivery/writer.ts";
import { IdGenerator } from "../../src/ids/tsid.ts";
import { freshPostgresDatabase, storeKinds } from "../support/stores.ts";

const BEFORE = migrations.slice(0, migrations.findIndex((m) => m.tag.endsWith("_timeline_repair")));

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A store at the schema before timelines. */
async function previousSchema(kind: "pglite" | "postgres"): Promise<Store> {
  if (kind === "pglite") {
    const store = await openStore({ url: "memory://", migrate: false });
    cleanups.push(() => store.close());
    await migrate(store, BEFORE);
    return store;
  }
  const db = await freshPostgresDatabase();
  const store = await openStore({ url: db.url, poolSize: 2, migrate: false });
  cleanups.push(async () => {
    await store.close();
    await db.drop();
  });
  // The test database is a clone of the current schema: start over from the previous one.
  await store.db.execute(sql`drop schema public cascade`);
  await store.db.execute(sql`create schema public`);
  await migrate(store, BEFORE);
  return store;
}

for (const kind of storeKinds()) {
  describe(`migration to timelines [${kind}]`, () => {
    test("pending group messages stay pending for the same devices; cursors go on from there", async () => {
      expect(BEFORE.length).toBeGreaterThan(0);
      const store = await previousSchema(kind);
      const ids = new IdGenerator(3);
      const [A, B, C, D, G] = [ids.next(), ids.next(), ids.next(), ids.next(), ids.next()];
      const db = store.db;
      // Raw SQL: the drizzle table has columns that later migrations add (users.suspended_at, …).
      for (const id of [A, B, C, D]) await store.rows(sql`insert into users (id, account, password_hash, created_at, updated_at) values (${id}, ${`u${id}`}, 'x', 0, 0)`);
      await db.insert(groups).values({ id: G, ownerId: A });
      // D has left; C joined at m2.
      await db.insert(groupMembers).values([
        { groupId: G, userId: A, role: "owner" },
        { groupId: G, userId: B },
        { groupId: G, userId: C },
      ]);
      const m = Array.from({ length: 6 }, () => ids.next());
      const now = Date.now();
      const clientId = (i: number, tsid: bigint) => `C2G.${tsid}.${now}.r${i}`;
      const rows = m.map((id, i) => ({
        id,
        // m6 (Bob's) reuses m1's tsid: allowed before, repaired by the upgrade.
        clientId: i === 5 ? clientId(5, 1000n) : clientId(i, i === 0 ? 1000n : 1000n + BigInt(i)),
        chatType: "C2G",
        fromId: i === 5 ? B : A,
        toId: G,
        payload: `{"text":"m${i + 1}"}`,
        serverTs: now,
      }));
      const c2cId = ids.next();
      // A C2C stored the old way too (inbox rows for both users, the sending device's mark), kept by 0014.
      for (const r of [...rows, { id: c2cId, clientId: `C2C.77.${now}.x`, chatType: "C2C", fromId: A, toId: B, payload: "{}", serverTs: now }]) {
        await store.rows(sql`insert into messages (id, client_id, chat_type, from_id, to_id, payload, server_ts)
          values (${r.id}, ${r.clientId}, ${r.chatType}, ${r.fromId}, ${r.toId}, ${r.payload}, ${r.serverTs})`);
      }
      const box: [bigint, number[]][] = [
        [A, [0, 1, 2, 3, 4, 5]],
        [B, [0, 1, 2, 3, 4, 5]],
        [C, [1, 2, 3, 4, 5]],
        [D, [0, 1, 2]],
      ];
      await db.insert(inbox).values([
        ...box.flatMap(([u, list]) => list.map((i) => ({ userId: u, messageId: m[i]! }))),
        { userId: B, messageId: c2cId },
        { userId: A, messageId: c2cId },
      ]);
      await db.insert(deliveryDevices).values([
        { userId: A, deviceId: "a1", floorId: 0n },
        { userId: B, deviceId: "b1", floorId: 0n },
        { userId: B, deviceId: "b2", floorId: m[2]! }, // registered later
        { userId: C, deviceId: "c1", floorId: 0n },
        { userId: D, deviceId: "d1", floorId: 0n },
      ]);
      const marked: [bigint, string, number[]][] = [
        [A, "a1", [0, 1, 2, 3, 4, 5]],
        [B, "b1", [0, 2, 4, 5]],
        [B, "b2", [5]],
        [C, "c1", [1, 2, 3, 4, 5]],
        [D, "d1", [0]],
      ];
      await db.insert(deliveryMarks).values([
        ...marked.flatMap(([u, d, list]) => list.map((i) => ({ userId: u, deviceId: d, messageId: m[i]! }))),
        { userId: A, deviceId: "a1", messageId: c2cId },
      ]);

      const reader = new InboxReader(store);
      const pendingOf = async (u: bigint, d: string) => (await reader.pending(u, d, 100)).rows.map((r) => r.payload);
      const expected: [bigint, string, string[]][] = [
        [A, "a1", []],
        [B, "b1", ['{"text":"m2"}', '{"text":"m4"}', "{}"]],
        [B, "b2", ['{"text":"m3"}', '{"text":"m4"}', '{"text":"m5"}', "{}"]],
        [C, "c1", []],
        [D, "d1", ['{"text":"m2"}', '{"text":"m3"}']],
      ];
      // The previous schema's definition: the inbox from the device floor up, minus its marks.
      const before = async (u: bigint, d: string) =>
        (
          await store.rows<{ payload: string }>(sql`select m.payload from inbox i join messages m on m.id = i.message_id
            where i.user_id = ${u} and i.message_id >= (select floor_id from delivery_device where user_id = ${u} and device_id = ${d})
              and not exists (select 1 from delivery_mark k where k.user_id = ${u} and k.device_id = ${d} and k.message_id = i.message_id)
            order by i.message_id`)
        ).map((r) => r.payload);
      for (const [u, d, want] of expected) expect(await before(u, d)).toEqual(want);

      expect((await migrate(store)).length).toBe(migrations.length - BEFORE.length);
      for (const [u, d, want] of expected) expect(await pendingOf(u, d)).toEqual(want);
      // Group messages left the inbox; the repaired id no longer shares m1's tsid.
      expect(await store.rows(sql`select 1 from inbox i join messages m on m.id = i.message_id where m.chat_type = 'C2G'`)).toEqual([]);
      const [m6] = await store.rows<{ client_id: string }>(sql`select client_id from messages where id = ${m[5]!}`);
      expect(m6!.client_id).toBe(`C2G.${m[5]!}.${now}.r5`);

      // b1 acknowledges m2 (seq 2): its cursor runs on to m3 (acknowledged before), m4 stays.
      await writeMarks(store, [{ userId: B, deviceId: "b1", messageId: m[1]!, conv: G, seq: 2n }]);
      expect(await pendingOf(B, "b1")).toEqual(['{"text":"m4"}', "{}"]);
      const [cur] = await store.rows<{ seq: bigint | string; above: unknown }>(
        sql`select seq, above::text as above from timeline_cursor where user_id = ${B} and device_id = 'b1'`,
      );
      expect([String(cur!.seq), cur!.above]).toEqual(["3", "{[5,7)}"]);
    }, 60_000);
  });
}
