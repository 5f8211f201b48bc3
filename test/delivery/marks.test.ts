import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, sql } from "drizzle-orm";
import type Redis from "ioredis";
import { RedisMarkShare } from "../../src/cluster/marks-redis.ts";
import { deliveryMarks } from "../../src/db/schema/index.ts";
import { openStore, type Store } from "../../src/db/store.ts";
import { MarkLedger, MemoryMarkShare } from "../../src/delivery/marks.ts";
import type { MarkRow } from "../../src/delivery/writer.ts";
import { connect, dropPrefix, uniquePrefix } from "../bus/redis-fixture.ts";
import { freshStore, type TestStore } from "../support/stores.ts";
import { deliveryOn, uplink, type Rig, type TestSession } from "./harness.ts";

const ALICE = 310000000000000001n;
const BOB = 310000000000000002n;

const marksOf = (store: Store, userId: bigint, deviceId: string) =>
  store.db.select().from(deliveryMarks).where(and(eq(deliveryMarks.userId, userId), eq(deliveryMarks.deviceId, deviceId)));

/** Alice → Bob, stored and pushed; Bob's session b1 has it. */
async function delivered(rig: Rig): Promise<{ b1: TestSession; m: Record<string, unknown> }> {
  rig.social.befriend(ALICE, BOB);
  const a1 = rig.sessions.open(ALICE, "a1");
  const b1 = rig.sessions.open(BOB, "b1");
  await rig.settle();
  const m = uplink("C2C", ALICE, BOB);
  rig.delivery.engine.onMessage(a1, m);
  await rig.settle();
  return { b1, m };
}

/**
 * b1 acks m while `locker` holds delivery_mark in SHARE mode (inserts wait,
 * reads do not); the confirm must come anyway; then `whileLocked` runs.
 */
async function ackWhileMarksLocked(locker: Store, rig: Rig, b1: TestSession, m: Record<string, unknown>, whileLocked: () => Promise<void>) {
  await locker.db.transaction(async (tx) => {
    await tx.execute(sql`lock table delivery_mark in share mode`);
    rig.delivery.engine.onAck(b1, { type: "C2C", msgId: m.id as string, did: "b1" });
    for (let i = 0; i < 500 && !b1.msgs({ type: "CLIENT_ACK_CONFIRM" }).length; i++) await Bun.sleep(2);
    expect(b1.msgs({ type: "CLIENT_ACK_CONFIRM" }).map((c) => c.id)).toEqual([m.id as string]);
    await whileLocked();
  });
}

describe("MarkLedger", () => {
  test("a recorded mark is unconfirmed until its batch commits, then dropped from the share", async () => {
    const share = new MemoryMarkShare();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const written: MarkRow[] = [];
    const ledger = new MarkLedger(
      share,
      async (rows) => {
        await gate;
        written.push(...rows);
      },
      100,
      () => {},
    );
    await ledger.record([{ userId: 1n, deviceId: "d", messageId: 42n }]); // settles before the commit
    expect(written).toEqual([]);
    expect(await ledger.unconfirmed(1n, "d")).toEqual([{ userId: 1n, deviceId: "d", messageId: 42n }]);
    release();
    await ledger.flush();
    expect(written).toHaveLength(1);
    expect(await ledger.unconfirmed(1n, "d")).toEqual([]);
    expect(share.size).toBe(0);
  });

  test("many marks share one write", async () => {
    const writes: number[] = [];
    const ledger = new MarkLedger(new MemoryMarkShare(), async (rows) => void writes.push(rows.length), 1000, () => {});
    for (let i = 0; i < 300; i++) ledger.record([{ userId: 1n, deviceId: "d", messageId: BigInt(i) }]);
    await ledger.flush();
    expect(writes).toEqual([300]);
  });

  test("a tick: marks recorded while the last batch is younger than the tick wait and go in one write; flush does not wait", async () => {
    const writes: number[] = [];
    const ledger = new MarkLedger(new MemoryMarkShare(), async (rows) => void writes.push(rows.length), 1000, () => {}, 10_000, 200);
    const mark = (i: number) => ledger.record([{ userId: 1n, deviceId: "d", messageId: BigInt(i) }]);
    mark(0);
    await Bun.sleep(20); // the first batch goes at once (no batch yet)
    expect(writes).toEqual([1]);
    for (let i = 1; i <= 50; i++) {
      mark(i);
      await Bun.sleep(1);
    }
    expect(writes).toEqual([1]); // within the tick: held
    await Bun.sleep(250);
    expect(writes).toEqual([1, 50]);
    mark(51);
    await ledger.flush(); // flush writes now, tick or not
    expect(writes).toEqual([1, 50, 1]);
  });

  test("a tick holds small batches only: a full batch goes at once, so the tick never caps how many marks a second are written", async () => {
    const writes: number[] = [];
    const ledger = new MarkLedger(new MemoryMarkShare(), async (rows) => void writes.push(rows.length), 10, () => {}, 10_000, 60_000);
    const marks = (from: number, n: number) =>
      ledger.record(Array.from({ length: n }, (_, i) => ({ userId: 1n, deviceId: "d", messageId: BigInt(from + i) })));
    marks(0, 1);
    await Bun.sleep(20);
    expect(writes).toEqual([1]);
    marks(1, 1); // a small batch: it waits for the one-minute tick
    await Bun.sleep(20);
    expect(writes).toEqual([1]);
    marks(2, 24); // now two full batches and a small one
    await Bun.sleep(50);
    expect(writes).toEqual([1, 10, 10]); // the last five wait for the tick
    await ledger.flush();
    expect(writes).toEqual([1, 10, 10, 5]);
  });

  test("bounded: with the store down, the oldest waiting marks are dropped (share too), memory stays flat", async () => {
    const share = new MemoryMarkShare();
    const errors: unknown[] = [];
    const ledger = new MarkLedger(share, () => Promise.reject(new Error("db down")), 100, (e) => void errors.push(e), 1000);
    for (let i = 0; i < 5000; i++) ledger.record([{ userId: 1n, deviceId: "d", messageId: BigInt(i) }]);
    await Bun.sleep(20);
    expect(share.size).toBeLessThanOrEqual(1100); // the waiting marks plus one failed batch on its way back
    expect(errors.some((e) => String(e).includes("dropped"))).toBe(true);
    expect((await ledger.unconfirmed(1n, "d")).some((m) => m.messageId === 4999n)).toBe(true); // the newest are kept
  });

  test("a share that fails makes record wait for the database commit instead", async () => {
    const failing = { add: () => Promise.reject(new Error("redis down")), drop: () => {}, of: () => [] as MarkRow[] };
    let committed = false;
    const ledger = new MarkLedger(
      failing,
      async () => {
        await Bun.sleep(5);
        committed = true;
      },
      100,
      () => {},
    );
    await ledger.record([{ userId: 1n, deviceId: "d", messageId: 1n }]);
    expect(committed).toBe(true);
  });

  test("with the share failing, a record waits for its own batch, not for marks recorded after it", async () => {
    const failing = { add: () => Promise.reject(new Error("redis down")), drop: () => {}, of: () => [] as MarkRow[] };
    const written: bigint[] = [];
    const ledger = new MarkLedger(
      failing,
      async (rows) => {
        await Bun.sleep(5);
        written.push(...rows.map((r) => r.messageId));
      },
      100,
      () => {},
    );
    let n = 0;
    const mark = () => ({ userId: 1n, deviceId: "d", messageId: BigInt(++n) });
    const first = ledger.record([mark()])!;
    // Marks keep arriving while the first batch is written: the queue never empties during the test.
    const feeder = setInterval(() => ledger.record([mark()]), 1);
    await first;
    clearInterval(feeder);
    expect(written).toContain(1n);
    expect(n).toBeGreaterThan(written.length); // resolved while later marks were still queued
    await ledger.flush();
  });

  test("a failed write is tried again; its marks stay visible meanwhile", async () => {
    const share = new MemoryMarkShare();
    let fail = true;
    const written: MarkRow[] = [];
    const ledger = new MarkLedger(
      share,
      async (rows) => {
        if (fail) throw new Error("db down");
        written.push(...rows);
      },
      100,
      () => {},
    );
    ledger.record([{ userId: 1n, deviceId: "d", messageId: 7n }]);
    await ledger.flush();
    expect(written).toEqual([]);
    expect((await ledger.unconfirmed(1n, "d")).map((m) => m.messageId)).toEqual([7n]);
    fail = false;
    for (let i = 0; i < 300 && !written.length; i++) {
      await Bun.sleep(10);
      await ledger.flush();
    }
    expect(written.map((m) => m.messageId)).toEqual([7n]);
    expect(share.size).toBe(0);
  });
});

describe("acks are confirmed before their mark commits [postgres]", () => {
  let ts: TestStore;
  let locker: Store;
  beforeAll(async () => {
    ts = await freshStore("postgres");
    locker = await openStore({ url: ts.url!, poolSize: 1, migrate: false });
  });
  afterAll(async () => {
    await locker.close();
    await ts.dispose();
  });

  test("CLIENT_ACK_CONFIRM while delivery_mark is locked; the pull already excludes the message; the mark lands after", async () => {
    const rig: Rig = deliveryOn(ts.store);
    const { b1, m } = await delivered(rig);
    await ackWhileMarksLocked(locker, rig, b1, m, async () => {
      // Not committed: the plain query still lists it; the pull with the unconfirmed marks does not.
      expect((await rig.delivery.inbox.pending(BOB, "b1", 10)).rows).toHaveLength(1);
      const acked = await rig.delivery.core.unconfirmed(BOB, "b1");
      expect((await rig.delivery.inbox.pending(BOB, "b1", 10, acked)).rows).toHaveLength(0);
    });
    await rig.settle();
    expect(await marksOf(ts.store, BOB, "b1")).toHaveLength(1);
    expect(await rig.delivery.core.unconfirmed(BOB, "b1")).toEqual([]);
    await rig.delivery.stop();
  });
});

describe("RedisMarkShare", () => {
  let redis: Redis;
  let ts: TestStore;
  const prefix = uniquePrefix();
  beforeAll(async () => {
    redis = await connect();
    ts = await freshStore("postgres");
  });
  afterAll(async () => {
    await dropPrefix(redis, prefix);
    redis.disconnect();
    await ts.dispose();
  });

  test("an ack on node 1 is excluded from a pull on node 2 before it commits", async () => {
    const one = deliveryOn(ts.store, {}, new RedisMarkShare(redis, prefix));
    const two = deliveryOn(ts.store, {}, new RedisMarkShare(redis, prefix));
    const { b1, m } = await delivered(one);
    const locker = await openStore({ url: ts.url!, poolSize: 1, migrate: false });
    try {
      await ackWhileMarksLocked(locker, one, b1, m, async () => {
        const acked = await two.delivery.core.unconfirmed(BOB, "b1");
        expect(acked.length).toBeGreaterThan(0);
        expect((await two.delivery.inbox.pending(BOB, "b1", 10, acked)).rows).toHaveLength(0);
      });
      await one.settle();
      await two.settle();
      expect(await marksOf(ts.store, BOB, "b1")).toHaveLength(1);
      await Bun.sleep(10); // the SREM leaves in the next tick's pipeline
      expect(await redis.smembers(`${prefix}marks:${BOB}:b1`)).toEqual([]);
    } finally {
      await locker.close();
      await one.delivery.stop();
      await two.delivery.stop();
    }
  });

  test("marks a dead node left in Redis are written to the database by the next reader", async () => {
    const rig = deliveryOn(ts.store, {}, new RedisMarkShare(redis, prefix));
    // As if a node confirmed this ack and died before its batch committed.
    await redis.sadd(`${prefix}marks:${BOB}:b9`, "123456789012345678");
    expect((await rig.delivery.core.unconfirmed(BOB, "b9")).map((m) => m.messageId)).toEqual([123456789012345678n]);
    await rig.settle();
    expect((await marksOf(ts.store, BOB, "b9")).map((r) => r.messageId)).toEqual([123456789012345678n]);
    await Bun.sleep(10);
    expect(await redis.smembers(`${prefix}marks:${BOB}:b9`)).toEqual([]);
    await rig.delivery.stop();
  });
});
