/**
 * Floors that follow acknowledgements (src/delivery/floors.ts, docs/delivery.md
 * "Floors"): a device's floor moves up to its first unacknowledged message,
 * never past the least watermark of the running nodes, and a node's watermark
 * stays under every message it may still commit, so a message minted before
 * one the device acknowledged but committed after it is still pending at the
 * device's next connect.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { IbisConnection } from "../../src/client/index.ts";
import { advanceFloorsQuery, InboxReader, SETTLE_MS } from "../../src/delivery/inbox.ts";
import { DeliveryWriter, mayHaveCommitted, type StoreItem } from "../../src/delivery/writer.ts";
import { PIPELINE_WITHIN_MS } from "../../src/db/store.ts";
import { toRow } from "../../src/delivery/wire.ts";
import { idFloorForTime } from "../../src/ids/tsid.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { explainPlan, freshStore, storeKinds, type TestStore } from "../support/stores.ts";
import { c2c, createUser } from "../support/ws.ts";

const T = Date.UTC(2026, 10, 28, 12);
const idAt = (low: bigint) => idFloorForTime(T) + low;

async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !(await check()); ) {
    if (Date.now() > end) throw new Error("timed out");
    await Bun.sleep(50);
  }
}

describe("mayHaveCommitted", () => {
  test.each([
    ["unique violation, reported by the database", Object.assign(new Error("dup"), { code: "23505" }), false],
    ["backend terminated before its commit", Object.assign(new Error("bye"), { code: "57P01" }), false],
    ["connection failure, class 08", Object.assign(new Error("gone"), { code: "08006" }), true],
    ["the driver's lost connection", Object.assign(new Error("closed"), { code: "CONNECTION_CLOSED" }), true],
    ["a socket error", Object.assign(new Error("reset"), { code: "ECONNRESET" }), true],
    ["no code at all", new Error("?"), true],
  ])("%s", (_name, err, may) => {
    expect(mayHaveCommitted(err)).toBe(may);
  });
});

for (const kind of storeKinds()) {
  describe(`floors behind acknowledgements [${kind}]`, () => {
    let ts: TestStore;
    beforeAll(async () => {
      ts = await freshStore(kind);
    });
    afterAll(() => ts.dispose());
    const run = (q: ReturnType<typeof sql>) => ts.store.db.execute(q);
    const floorOf = async (user: number) =>
      BigInt((await ts.store.rows<{ f: string }>(sql`select floor_id::text as f from delivery_device where user_id = ${user} and device_id = 'd'`))[0]!.f);

    test("up to the first unacknowledged message, never past the least live watermark; other devices stay", async () => {
      await run(sql`insert into delivery_device (user_id, device_id, floor_id) values (1, 'd', 0), (3, 'd', 0)`);
      // Five C2C messages to user 1 and one to user 3, every one of user 3's acknowledged.
      for (let i = 1n; i <= 5n; i++) {
        await run(sql`insert into messages (id, client_id, chat_type, from_id, from_device, to_id, payload, server_ts)
          values (${idAt(i)}, ${`C2C.${i}.1.a`}, 'C2C', 2, 'x', 1, '{}', 1)`);
      }
      await run(sql`insert into messages (id, client_id, chat_type, from_id, from_device, to_id, payload, server_ts)
        values (${idAt(9n)}, 'C2C.9.1.a', 'C2C', 2, 'x', 3, '{}', 1)`);
      const mark = (user: number, low: bigint) => run(sql`insert into delivery_mark (user_id, device_id, message_id) values (${user}, 'd', ${idAt(low)})`);
      for (const low of [1n, 2n, 3n]) await mark(1, low);
      await mark(3, 9n);
      const now = T + 1_000;
      // A live node at message 5; one not seen for SETTLE_MS (stopped without removing its row) at message 2.
      await run(sql`insert into writer_watermark (instance, low_id, seen_at) values ('live', ${idAt(5n)}, ${now - 500}),
        ('dead', ${idAt(2n)}, ${now - SETTLE_MS - 1})`);
      const inbox = new InboxReader(ts.store);
      await inbox.advanceFloors([{ userId: 1n, deviceId: "d" }], now);
      expect(await floorOf(1)).toBe(idAt(4n)); // message 4 is the first unacknowledged (the dead row would say 2)
      expect(await floorOf(3)).toBe(0n); // not named
      await mark(1, 5n); // acknowledged past a hole: message 4 holds the floor
      await inbox.advanceFloors([{ userId: 1n, deviceId: "d" }], now);
      expect(await floorOf(1)).toBe(idAt(4n));
      await mark(1, 4n);
      await inbox.advanceFloors([{ userId: 1n, deviceId: "d" }, { userId: 3n, deviceId: "d" }], now);
      // Everything acknowledged: the floors stop at the live watermark (message 5 may still be committing elsewhere).
      expect([await floorOf(1), await floorOf(3)]).toEqual([idAt(5n), idAt(5n)]);
      // Without a live row only the settled bound holds, which is below the floor: it never goes down.
      await run(sql`delete from writer_watermark`);
      await inbox.advanceFloors([{ userId: 1n, deviceId: "d" }], now + 60_000);
      expect(await floorOf(1)).toBe(idAt(5n));
    });

    test("a frame ACK's tsid names the device's pending message, not one under its floor whose mark compaction deleted", async () => {
      // The same tsid in two conversations with user 5: one acknowledged long ago (under the floor, mark gone), one pending.
      await run(sql`insert into delivery_device (user_id, device_id, floor_id) values (5, 'd', ${idAt(50n)})`);
      await run(sql`insert into messages (id, client_id, chat_type, from_id, from_device, to_id, payload, server_ts)
        values (${idAt(10n)}, 'C2C.777.1.a', 'C2C', 6, 'x', 5, '{}', 1), (${idAt(60n)}, 'C2C.777.1.b', 'C2C', 7, 'x', 5, '{}', 1)`);
      const target = await new InboxReader(ts.store).resolveTsid(5n, "d", "C2C", "777");
      expect(target?.serverId).toBe(idAt(60n));
    });

    test("the writer's watermark: an id just minted when nothing is queued, else the least one queued", async () => {
      const writer = new DeliveryWriter(ts.store, 100);
      const item = (id: bigint): StoreItem => ({ row: toRow(c2c(7n, 8n), id, "x"), inbox: [], marks: [] });
      expect(writer.lowWater(idAt(100n))).toBe(idAt(100n));
      const done = [writer.messages.add(item(idAt(20n))), writer.messages.add(item(idAt(21n)))];
      expect(writer.lowWater(idAt(100n))).toBe(idAt(20n));
      await Promise.all(done);
      expect(writer.lowWater(idAt(101n))).toBe(idAt(101n));
    });
  });
}

describe("a late commit under an advanced floor [postgres]", () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startTestNode("postgres", { allowStrangers: true, throttleOff: true, heartbeatInterval: 60_000 });
  });
  afterAll(() => node.stop());

  test("a message minted before one the device acknowledged, committed after the floor moved, is pending at its next connect", async () => {
    const store = node.services.store;
    const [alice, bob, carol] = [await createUser(node, "a1"), await createUser(node, "b1"), await createUser(node, "c1")];
    const open = async (userId: bigint, did: string) => {
      const { token } = await node.services.tokens.pair(userId, did);
      return IbisConnection.open({ url: node.url, token, deviceId: did, protocols: ["svc-json"] });
    };
    const [a1, b1, c1] = [await open(alice.userId, "a1"), await open(bob.userId, "b1"), await open(carol.userId, "c1")];
    const floor = async () =>
      BigInt((await store.rows<{ f: string }>(sql`select floor_id::text as f from delivery_device where user_id = ${bob.userId} and device_id = 'b1'`))[0]?.f ?? -1);
    await until(async () => (await floor()) >= 0n); // the connect check records it beside the handshake
    const f0 = await floor();

    // An uncommitted row with m1's id in the same conversation: m1's insert waits for it (a commit held up).
    const m1 = c2c(alice.userId, bob.userId, "late");
    const ROLLBACK = new Error("rollback");
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const inPlace = new Promise<void>((r) => (holding = r));
    const blocker = store.db
      .transaction(async (tx) => {
        await tx.execute(sql`insert into messages (id, client_id, chat_type, from_id, to_id, payload, server_ts)
          values (${idFloorForTime(Date.now()) - 1n}, ${m1.id}, 'C2C', ${alice.userId}, ${bob.userId}, '{}', 1)`);
        holding();
        await held;
        throw ROLLBACK;
      })
      .catch((e: unknown) => {
        if (e !== ROLLBACK) throw e;
      });
    await inPlace;
    a1.send(m1);
    await until(async () => (await store.rows(sql`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like 'insert into messages%'`)).length > 0);
    // m1's batch has waited past the pipelining window: the next batch goes to the pool, not behind it (src/db/store.ts).
    await Bun.sleep(PIPELINE_WITHIN_MS * 2);

    // A later message from someone else commits, is delivered and acknowledged: the floor moves behind it.
    const m2 = c2c(carol.userId, bob.userId, "on time");
    c1.send(m2);
    await b1.nextMessage((x) => x.id === m2.id && x.type === "C2C");
    b1.ack({ type: "C2C", msgId: m2.id });
    await b1.nextAction("CLIENT_ACK_CONFIRM");
    await until(async () => (await floor()) > f0);
    await b1.close();

    release();
    await blocker;
    expect(await a1.nextMessage((x) => x.in_reply_to === m1.id)).toMatchObject({ type: "C2C_SERVER_ACK", id: m1.id });
    // m1 was minted before m2 and committed after the floor moved: the floor stayed at or under it.
    const again = await open(bob.userId, "b1");
    await again.nextAction("pull_offline_msg");
    const { token } = await node.services.tokens.pair(bob.userId, "b1");
    const off = await api(node, "GET", "/api/v1/msg/offline", { token });
    expect(off.body.payload.list.map((x: { id: string }) => x.id)).toEqual([m1.id]);
    for (const c of [a1, c1, again]) await c.close();
  });

  test("a node's watermark row is in while it runs and gone after a clean stop", async () => {
    const other = await startTestNode("postgres");
    const rows = async () => (await other.services.store.rows<{ n: number }>(sql`select count(*)::int as n from writer_watermark`))[0]!.n;
    expect(await rows()).toBe(1);
    const store = other.services.store;
    await other.services.delivery!.stop();
    expect((await store.rows<{ n: number }>(sql`select count(*)::int as n from writer_watermark`))[0]!.n).toBe(0);
    await other.stop();
  });
});

describe("moving floors reads each named device's first pending message by index [postgres]", () => {
  const N = 20_000;
  let ts: TestStore;
  beforeAll(async () => {
    ts = await freshStore("postgres");
    const run = (q: ReturnType<typeof sql>) => ts.store.db.execute(q);
    await run(sql`insert into delivery_device (user_id, device_id, floor_id) select 1000 + i, 'd', 0 from generate_series(0, ${N - 1}) i`);
    await run(sql`analyze`);
    // Filled after the statistics were taken, as a running node's database is between analyses: with these
    // estimates the planner once read every mark of a device for each message it walked.
    await run(sql`insert into messages (id, client_id, chat_type, from_id, from_device, to_id, payload, server_ts)
      select i, 'C2C.' || i || '.1.a', 'C2C', 1000 + (i * 7) % ${N}, 'd', 1000 + i % ${N}, '{}', 1 from generate_series(1, ${5 * N}) i`);
    await run(sql`insert into delivery_mark (user_id, device_id, message_id) select 1000 + i % ${N}, 'd', i from generate_series(1, ${4 * N}) i`);
    await run(sql`insert into inbox (user_id, message_id) select 1000 + i % ${N}, i from generate_series(1, ${N}) i`);
  });
  afterAll(() => ts?.dispose());

  test("a primary-key probe per device, each source's index walked under a limit of one, a mark probe per message, no table scan", async () => {
    const text = await explainPlan(ts.store, advanceFloorsQuery([{ userId: 1001n, deviceId: "d" }, { userId: 1002n, deviceId: "d" }], T));
    for (const index of ["messages_c2c_to_idx", "messages_c2c_from_idx", "inbox_user_id_message_id_pk"]) {
      expect(text).toMatch(new RegExp(`Limit[^\\n]*\\n(?:[^\\n]*\\n){0,2}[^\\n]*Index (Only )?Scan using ${index}`));
    }
    expect(text).toMatch(/Index Scan using delivery_device_user_id_device_id_pk/);
    // Each C2C side: its first row at the floor, then a walk bounded by the best found so far (a device stuck behind
    // one unacknowledged message walks nothing); computed once per device, not again in the update's filter.
    expect(text.match(/Scan using messages_c2c_to_idx/g)).toHaveLength(2);
    expect(text).toMatch(/messages_c2c_to_idx[^\n]*\n\s*Index Cond: \(\(to_id = [^\n]*\(id >= [^\n]*\(id < /);
    expect(text).toMatch(/messages_c2c_from_idx[^\n]*\n\s*Index Cond: \(\(from_id = [^\n]*\(id >= [^\n]*\(id < /);
    expect(text).not.toMatch(/Seq Scan on (messages|delivery_device|delivery_mark|inbox)\b/);
    // Each message walked: one probe of its mark by the whole key, never the device's marks joined afterwards.
    expect(text.match(/on delivery_mark[^\n]*\n\s*Index Cond: \(\(user_id = [^\n]*\(device_id = [^\n]*\(message_id = /g)).toHaveLength(6);
    expect(text).not.toMatch(/Anti Join/);
  });
});
