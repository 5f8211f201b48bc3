import { describe, expect, test } from "bun:test";
import { messages } from "../../src/db/schema/index.ts";
import { sql } from "drizzle-orm";
import { openStore, type Store } from "../../src/db/store.ts";
import { parseSeqRuns } from "../../src/db/schema/timeline.ts";
import { ABOVE_MAX, DeliveryWriter, foldRuns, writeMarks, type MarkRow, type StoreItem } from "../../src/delivery/writer.ts";
import { freshStore, storeKinds } from "../support/stores.ts";
import { metrics } from "../../src/metrics/index.ts";

const item = (id: bigint, clientId: string, from = 1n): StoreItem => ({
  row: { id, clientId, chatType: "C2C", fromId: from, toId: 2n, payload: "{}", serverTs: 1 },
  inbox: [from, 2n],
  marks: [],
});

for (const kind of storeKinds()) {
  describe(`DeliveryWriter [${kind}]`, () => {
    test("a resent id is a duplicate of the stored row; a server id already taken is `taken`, never acked as stored", async () => {
      const fresh = await freshStore(kind);
      const w = new DeliveryWriter(fresh.store, 16);
      expect(await w.messages.add(item(10n, "C2C.1.1.a"))).toEqual({ serverId: 10n, serverTs: 1, duplicate: false });
      // The same sender and client id again (a resend): acknowledged with the first row's server id.
      expect(await w.messages.add(item(11n, "C2C.1.1.a"))).toEqual({ serverId: 10n, serverTs: 1, duplicate: true });
      // Another message minted with server id 10 (two nodes with one node id, seen in the fault suite): not stored,
      // answered `taken` (the engine refuses it), alone and inside a batch, never as a duplicate of row 10.
      expect(await w.messages.add(item(10n, "C2C.2.1.b"))).toMatchObject({ duplicate: false, taken: true });
      const batch = await Promise.all([w.messages.add(item(12n, "C2C.3.1.c")), w.messages.add(item(10n, "C2C.4.1.d")), w.messages.add(item(10n, "C2C.4.1.d"))]);
      expect(batch.map((r) => r.taken === true)).toEqual([false, true, true]);
      const stored = await fresh.store.db.select({ clientId: messages.clientId }).from(messages);
      expect(stored.map((r) => r.clientId).sort()).toEqual(["C2C.1.1.a", "C2C.3.1.c"]);
      await fresh.dispose();
    });

    test("message batches in flight: the configured depth on PostgreSQL (2 by default, the second beside a small batch only), always 1 on PGlite", async () => {
      const fresh = await freshStore(kind);
      const w = new DeliveryWriter(fresh.store, 16);
      expect(w.messages.depth).toBe(kind === "postgres" ? 2 : 1);
      expect(w.messages.order.overlapBelow).toBe(32);
      // A batch in flight 100 ms gives its slot back on PostgreSQL (a lock wait holds no one else); PGlite: never.
      expect(w.messages.order.stallMs).toBe(kind === "postgres" ? 100 : undefined);
      // A group message closes the second slot (a group's batches take its head row one after another).
      expect(w.messages.order.weightOf!(item(1n, "C2C.1.1.w"))).toBe(1);
      expect(w.messages.order.weightOf!({ ...item(2n, "C2G.2.1.w"), row: { ...item(2n, "C2G.2.1.w").row, chatType: "C2G" } })).toBe(32);
      expect(new DeliveryWriter(fresh.store, 16, undefined, 1).messages.depth).toBe(1);
      await fresh.dispose();
    });

    test("a batch stores every text exactly: quotes, backslashes, NULL-looking text, non-ASCII, absent columns", async () => {
      const fresh = await freshStore(kind);
      const w = new DeliveryWriter(fresh.store, 16);
      const texts = ['{"text":"say \\"hi\\" \\\\ back"}', '{"text":"NULL"}', '{"text":"ünï 🦩 {a,b}"}'];
      const rows = texts.map((payload, i) => ({
        ...item(BigInt(20 + i), `C2C.${20 + i}.1.q`),
        row: { ...item(BigInt(20 + i), `C2C.${20 + i}.1.q`).row, payload, ...(i === 1 ? { e2ee: '{"e2ee":true}', createdAt: '"2026-01-02T03:04:05Z"', action: "a,b" } : i === 2 ? { action: "NULL" } : {}) },
      }));
      await Promise.all(rows.map((r) => w.messages.add(r)));
      expect(w.messages.batches).toBe(1);
      const back = await fresh.store.db
        .select({ id: messages.id, payload: messages.payload, e2ee: messages.e2ee, createdAt: messages.createdAt, action: messages.action })
        .from(messages)
        .orderBy(messages.id);
      expect(back).toEqual(
        rows.map((r) => ({ id: r.row.id, payload: r.row.payload, e2ee: r.row.e2ee ?? null, createdAt: r.row.createdAt ?? null, action: r.row.action ?? "" })),
      );
      await fresh.dispose();
    });

    test("a payload held as bytes (as it arrived) goes in as those bytes, alone and in a batch: its text is never made", async () => {
      const fresh = await freshStore(kind);
      const w = new DeliveryWriter(fresh.store, 16);
      const payload = `{"text":"${"ü🦩\\\"".repeat(30_000)}"}`;
      // Bytes that differ from the text (never so outside this test) show which of the two went in.
      const asBytes = `{"bytes":"${"ü🦩\\\"".repeat(30_000)}"}`;
      let textReads = 0;
      const held = (id: bigint, clientId: string): StoreItem => {
        const base = item(id, clientId);
        const row = { ...base.row, payloadUtf8: new TextEncoder().encode(asBytes) };
        // The text of a held payload is made when read (src/delivery/wire.ts): count the reads.
        Object.defineProperty(row, "payload", { enumerable: true, get: () => (textReads++, payload) });
        return { ...base, row: row as typeof base.row };
      };
      await w.messages.add(held(30n, "C2C.30.1.a")); // alone: the bytes are bound
      expect(textReads).toBe(0); // and its text never asked for
      // One batch of two: the bytes are copied into the payloads' array literal (ArrayBytes), escaped on the way.
      await Promise.all([w.messages.add(held(31n, "C2C.31.1.a")), w.messages.add(item(32n, "C2C.32.1.a"))]);
      expect(w.messages.batches).toBe(2);
      expect(textReads).toBe(0);
      const back = await fresh.store.db.select({ id: messages.id, payload: messages.payload }).from(messages).orderBy(messages.id);
      expect(back).toEqual([{ id: 30n, payload: asBytes }, { id: 31n, payload: asBytes }, { id: 32n, payload: "{}" }]);
      expect(payload).not.toBe(asBytes);
      await fresh.dispose();
    });

    test("batches go in as plain inserts; one that hits a unique index is written again deduplicating, adding nothing twice", async () => {
      const fresh = await freshStore(kind);
      const w = new DeliveryWriter(fresh.store, 16);
      const withMark = (id: bigint, clientId: string): StoreItem => ({ ...item(id, clientId), marks: [{ userId: 1n, deviceId: "phone" }] });
      const rewrites = () => metrics.dbRewrites.value;
      const before = rewrites();
      await Promise.all([w.messages.add(withMark(10n, "C2C.1.1.a")), w.messages.add(withMark(11n, "C2C.2.1.a"))]);
      expect(rewrites()).toBe(before); // no conflict: one plain statement
      // A batch holding a resend (of 10) and a new message (12): the plain statement is refused as a whole,
      // the deduplicating one stores 12 and acknowledges the resend as 10.
      const again = await Promise.all([w.messages.add(withMark(13n, "C2C.1.1.a")), w.messages.add(withMark(12n, "C2C.3.1.a"))]);
      expect(rewrites()).toBe(before + 1);
      expect(again).toEqual([
        { serverId: 10n, serverTs: 1, duplicate: true },
        { serverId: 12n, serverTs: 1, duplicate: false },
      ]);
      const count = async (table: string) =>
        (await fresh.store.rows<{ mid: bigint | string; n: number | string }>(sql.raw(`select message_id as mid, count(*) as n from ${table} group by message_id order by 1`))).map(
          (r) => [BigInt(r.mid), Number(r.n)],
        );
      expect(await count("inbox")).toEqual([[10n, 2], [11n, 2], [12n, 2]]);
      expect(await count("delivery_mark")).toEqual([[10n, 1], [11n, 1], [12n, 1]]);
      await fresh.dispose();
    });

    test("C2C rows alone (as the engine queues them, nothing returned): each acknowledged as stored; a resend or a taken id still deduplicated", async () => {
      const fresh = await freshStore(kind);
      const w = new DeliveryWriter(fresh.store, 16);
      const bare = (id: bigint, clientId: string): StoreItem => ({ ...item(id, clientId), inbox: [] });
      const rewrites = () => metrics.dbRewrites.value;
      const before = rewrites();
      // Alone (one row's text) and in a batch (the arrays' text): plain statements, every row stored.
      expect(await w.messages.add(bare(40n, "C2C.40.1.a"))).toEqual({ serverId: 40n, serverTs: 1, duplicate: false });
      const batch = await Promise.all([w.messages.add(bare(41n, "C2C.41.1.a")), w.messages.add(bare(42n, "C2C.42.1.a")), w.messages.add(bare(43n, "C2C.41.1.a"))]);
      expect(batch).toEqual([
        { serverId: 41n, serverTs: 1, duplicate: false },
        { serverId: 42n, serverTs: 1, duplicate: false },
        { serverId: 41n, serverTs: 1, duplicate: true }, // repeated inside the batch: the first one stored
      ]);
      expect(rewrites()).toBe(before);
      // A resend of 40 beside a new message, and a server id already taken: the plain statement is refused whole.
      const again = await Promise.all([w.messages.add(bare(44n, "C2C.40.1.a")), w.messages.add(bare(45n, "C2C.45.1.a")), w.messages.add(bare(42n, "C2C.46.1.b"))]);
      expect(rewrites()).toBe(before + 1);
      expect(again[0]).toEqual({ serverId: 40n, serverTs: 1, duplicate: true });
      expect(again[1]).toEqual({ serverId: 45n, serverTs: 1, duplicate: false });
      expect(again[2]).toMatchObject({ duplicate: false, taken: true });
      const stored = await fresh.store.db.select({ id: messages.id, clientId: messages.clientId }).from(messages).orderBy(messages.id);
      expect(stored).toEqual([40n, 41n, 42n, 45n].map((id) => ({ id, clientId: `C2C.${id}.1.a` })));
      await fresh.dispose();
    });

    test("a resend is the same sender and id in the same conversation: the same id in another conversation is another message", async () => {
      const fresh = await freshStore(kind);
      const w = new DeliveryWriter(fresh.store, 16);
      const msg = (id: bigint, chatType: "C2C" | "C2G" | "C2S", clientId: string, from: bigint, to: bigint): StoreItem => ({
        row: { id, clientId, chatType, fromId: from, toId: to, payload: "{}", serverTs: Number(id) },
        inbox: chatType === "C2S" ? [from] : [],
        marks: [],
      });
      const stored = (id: bigint) => ({ serverId: id, serverTs: Number(id), duplicate: false });
      const dup = (id: bigint) => ({ serverId: id, serverTs: Number(id), duplicate: true });
      // C2C: user 1's id to user 2, then to user 3 (stored: another conversation), then again to 2 (a resend), alone
      // and in a batch beside a new message; user 2 answering with that tsid in their pair: taken.
      expect(await w.messages.add(msg(50n, "C2C", "C2C.500.1.a", 1n, 2n))).toEqual(stored(50n));
      expect(await w.messages.add(msg(51n, "C2C", "C2C.500.1.a", 1n, 3n))).toEqual(stored(51n));
      expect(await w.messages.add(msg(52n, "C2C", "C2C.500.1.a", 1n, 2n))).toEqual(dup(50n));
      const batch = await Promise.all([
        w.messages.add(msg(53n, "C2C", "C2C.500.1.a", 1n, 3n)),
        w.messages.add(msg(54n, "C2C", "C2C.501.1.a", 1n, 2n)),
        w.messages.add(msg(55n, "C2C", "C2C.500.1.a", 1n, 4n)),
        w.messages.add(msg(56n, "C2C", "C2C.500.1.b", 2n, 1n)),
        // The same id again in the batch, to user 4: a repeat of the second message with that id, not of the first.
        w.messages.add(msg(57n, "C2C", "C2C.500.1.a", 1n, 4n)),
      ]);
      expect(batch.slice(0, 3)).toEqual([dup(51n), stored(54n), stored(55n)]);
      expect(batch[3]).toMatchObject({ duplicate: false, taken: true });
      expect(batch[4]).toEqual(dup(55n));
      // One id in two conversations, then again in the second, all new in one batch: the repeat is found in the
      // batch (the plain statement is not refused by a unique index and written again).
      const rewrites = metrics.dbRewrites.value;
      const fresh3 = await Promise.all([
        w.messages.add(msg(58n, "C2C", "C2C.502.1.a", 1n, 3n)),
        w.messages.add(msg(59n, "C2C", "C2C.502.1.a", 1n, 4n)),
        w.messages.add(msg(63n, "C2C", "C2C.502.1.a", 1n, 4n)),
      ]);
      expect(fresh3).toEqual([stored(58n), stored(59n), dup(59n)]);
      expect(metrics.dbRewrites.value).toBe(rewrites);
      // C2G: the same id in two groups is two messages; again in the first group, a resend.
      expect(await w.messages.add(msg(60n, "C2G", "C2G.600.1.a", 1n, 900n))).toMatchObject(stored(60n));
      expect(await w.messages.add(msg(61n, "C2G", "C2G.600.1.a", 1n, 901n))).toMatchObject(stored(61n));
      expect(await w.messages.add(msg(62n, "C2G", "C2G.600.1.a", 1n, 900n))).toEqual(dup(60n));
      // C2S: ids per sender, as before.
      expect(await w.messages.add(msg(70n, "C2S", "C2S.700.1.a", 1n, 5n))).toEqual(stored(70n));
      expect(await w.messages.add(msg(71n, "C2S", "C2S.700.1.a", 1n, 6n))).toEqual(dup(70n));
      const rows = await fresh.store.db.select({ id: messages.id }).from(messages).orderBy(messages.id);
      expect(rows.map((r) => r.id)).toEqual([50n, 51n, 54n, 55n, 58n, 59n, 60n, 61n, 70n]);
      await fresh.dispose();
    });

    test("a batch numbers its group messages only: C2C alone, C2G alone and mixed, plain and deduplicating", async () => {
      const fresh = await freshStore(kind);
      const w = new DeliveryWriter(fresh.store, 16);
      const group = (id: bigint, clientId: string): StoreItem => ({
        row: { id, clientId, chatType: "C2G", fromId: 1n, toId: 900n, payload: "{}", serverTs: 1 },
        inbox: [],
        marks: [],
      });
      // C2C only (the text without the timeline steps), then a C2G alone, then a mixed batch with a resend of each.
      expect(await Promise.all([w.messages.add(item(30n, "C2C.30.1.a")), w.messages.add(item(31n, "C2C.31.1.a"))])).toEqual([
        { serverId: 30n, serverTs: 1, duplicate: false },
        { serverId: 31n, serverTs: 1, duplicate: false },
      ]);
      expect(await w.messages.add(group(32n, "C2G.32.1.a"))).toEqual({ serverId: 32n, serverTs: 1, duplicate: false, seq: 1n });
      const mixed = await Promise.all([
        w.messages.add(item(33n, "C2C.33.1.a")),
        w.messages.add(group(34n, "C2G.34.1.a")),
        w.messages.add(group(35n, "C2G.32.1.a")), // resend: makes the plain statement fail and the batch deduplicate
        w.messages.add(item(36n, "C2C.30.1.a")), // resend
        w.messages.add(group(37n, "C2G.37.1.a")),
      ]);
      expect(mixed).toEqual([
        { serverId: 33n, serverTs: 1, duplicate: false },
        { serverId: 34n, serverTs: 1, duplicate: false, seq: 2n },
        { serverId: 32n, serverTs: 1, duplicate: true },
        { serverId: 30n, serverTs: 1, duplicate: true },
        { serverId: 37n, serverTs: 1, duplicate: false, seq: 3n },
      ]);
      const heads = await fresh.store.rows<{ last_seq: bigint | string }>(sql`select last_seq from timeline_head where conv_id = 900`);
      expect(heads.map((h) => Number(h.last_seq))).toEqual([3]);
      await fresh.dispose();
    });
  });
}

test("PostgreSQL: message batches go out on the writer's own connection, pipelined behind the one in flight; a large message on the pool, never behind them [postgres]", async () => {
  const ts = await freshStore("postgres");
  // The same database, with pipelining allowed behind a statement of any age (the default's 5 ms is a timing).
  const fresh = { store: await openStore({ url: ts.url, poolSize: 4, migrate: false, pipelineWithinMs: 60_000 }) };
  const admin = await openStore({ url: ts.url, poolSize: 1, migrate: false }); // holds the lock (advisory locks are per database)
  const LOCK = 0x1b5702;
  await admin.rows(sql`select pg_advisory_lock(${LOCK})`);
  // The writer's connection waits for the lock: whatever is pipelined behind it waits too.
  const held = fresh.store.writes("select pg_advisory_lock_shared($1)", [LOCK]);
  const w = new DeliveryWriter(fresh.store, 16);
  let smallDone = false;
  const small = w.messages.add(item(30n, "C2C.30.1.s", 1n)).then((r) => ((smallDone = true), r));
  const base = item(31n, "C2C.31.1.l", 3n);
  const large: StoreItem = { ...base, inbox: [], row: { ...base.row, payload: JSON.stringify({ text: "l".repeat((1 << 20) + 16) }) } };
  try {
    // Over a batch's bytes (a lane of its own): written on the pool while the small one waits behind the lock.
    expect(await w.messages.add(large)).toMatchObject({ serverId: 31n, duplicate: false });
    expect(smallDone).toBe(false);
  } finally {
    await admin.rows(sql`select pg_advisory_unlock(${LOCK})`);
  }
  expect(await small).toMatchObject({ serverId: 30n, duplicate: false });
  await held;
  const stored = await fresh.store.db.select({ id: messages.id }).from(messages).orderBy(messages.id);
  expect(stored.map((r) => r.id)).toEqual([30n, 31n]);
  await admin.close();
  await fresh.store.close();
  await ts.dispose();
});

describe("foldRuns", () => {
  const ack = (seq: bigint, conv = 7n, userId = 1n, deviceId = "d"): MarkRow => ({ userId, deviceId, messageId: 0n, conv, seq });
  const cases: [string, MarkRow[], [string, string, string, string, string][]][] = [
    ["in order: one run", [ack(3n), ack(4n), ack(5n)], [["1", "d", "7", "3", "5"]]],
    ["out of order and repeated: one run", [ack(5n), ack(3n), ack(4n), ack(4n)], [["1", "d", "7", "3", "5"]]],
    ["a hole cuts the run", [ack(1n), ack(2n), ack(4n), ack(5n), ack(9n)], [["1", "d", "7", "1", "2"], ["1", "d", "7", "4", "5"], ["1", "d", "7", "9", "9"]]],
    ["devices and groups apart", [ack(1n), ack(1n, 8n), ack(2n, 7n, 1n, "e")], [["1", "d", "7", "1", "1"], ["1", "d", "8", "1", "1"], ["1", "e", "7", "2", "2"]]],
    ["inbox marks are not runs", [{ userId: 1n, deviceId: "d", messageId: 42n }], []],
    ["above 2^53 exactly", [ack(2n ** 60n), ack(2n ** 60n + 1n, 2n ** 62n)], [["1", "d", "7", "1152921504606846976", "1152921504606846976"], ["1", "d", "4611686018427387904", "1152921504606846977", "1152921504606846977"]]],
  ];
  for (const [name, marks, want] of cases) {
    test(name, () => {
      const r = foldRuns(marks);
      expect(r.users.map((u, i) => [u, r.devices[i], r.convs[i], r.lo[i], r.hi[i]])).toEqual(want);
    });
  }
});

for (const kind of storeKinds()) {
  describe(`writeMarks: cursors [${kind}]`, () => {
    const ack = (seq: number, deviceId = "d"): MarkRow => ({ userId: 1n, deviceId, messageId: 0n, conv: 7n, seq: BigInt(seq) });
    const cursor = async (store: Store, deviceId = "d") => {
      const [row] = await store.rows<{ seq: bigint | string; above: string }>(
        sql`select seq, above::text as above from timeline_cursor where user_id = 1 and device_id = ${deviceId} and conv_id = 7`,
      );
      return row && { seq: Number(row.seq), above: parseSeqRuns(row.above).flatMap(([lo, hi]) => Array.from({ length: Number(hi - lo) + 1 }, (_, i) => Number(lo) + i)) };
    };
    // Batches written one after another → the cursor row after the last.
    const cases: [string, number[][], { seq: number; above: number[] }, number?][] = [
      ["one run from the start", [[1, 2, 3]], { seq: 3, above: [] }],
      ["ack N+2 before N+1: N+1 stays pending, then closes the run", [[1, 3], [2]], { seq: 3, above: [] }],
      ["holes stay above, in order", [[1, 2, 5, 4, 8]], { seq: 2, above: [4, 5, 8] }],
      ["stored above merges with new runs", [[1, 4, 6], [2, 3]], { seq: 4, above: [6] }],
      ["an ack at or below the cursor changes nothing", [[1, 2, 3], [2, 1]], { seq: 3, above: [] }],
      ["numbers up to the latest join count as acknowledged", [[12, 13]], { seq: 13, above: [] }, 11],
      ["not the ones after the join", [[13]], { seq: 11, above: [13] }, 11],
      ["a hole that stays open: everything after it is one range", [[1], Array.from({ length: 998 }, (_, i) => i + 3)], { seq: 1, above: Array.from({ length: 998 }, (_, i) => i + 3) }],
      ["the hole filled at last: the cursor runs through the range", [[1], Array.from({ length: 998 }, (_, i) => i + 3), [2]], { seq: 1000, above: [] }],
    ];
    for (const [name, batches, want, joinSeq] of cases) {
      test(name, async () => {
        const fresh = await freshStore(kind);
        if (joinSeq !== undefined) await fresh.store.query(`insert into timeline_member (conv_id, user_id, join_seq) values (7, 1, ${joinSeq})`, []);
        for (const b of batches) await writeMarks(fresh.store, b.map((s) => ack(s)));
        expect(await cursor(fresh.store)).toEqual(want);
        await fresh.dispose();
      });
    }

    test("two batches of the same device written at once merge as sets: nothing acknowledged is lost", async () => {
      const fresh = await freshStore(kind);
      await Promise.all([writeMarks(fresh.store, [ack(1), ack(2), ack(5)]), writeMarks(fresh.store, [ack(3), ack(7)])]);
      const got = await cursor(fresh.store);
      // Either order: every acked number is at or below the cursor or in `above`.
      const covered = (n: number) => n <= got!.seq || got!.above.includes(n);
      expect([1, 2, 3, 5, 7].every(covered)).toBe(true);
      expect(got!.above.every((n) => n > got!.seq)).toBe(true);
      await fresh.dispose();
    });

    test("2,000 acks over 100 devices write 100 rows", async () => {
      const fresh = await freshStore(kind);
      const marks: MarkRow[] = [];
      for (let s = 1; s <= 20; s++) for (let d = 0; d < 100; d++) marks.push(ack(s, `d${d}`));
      await writeMarks(fresh.store, marks);
      const rows = await fresh.store.rows<{ n: bigint | string; lo: bigint | string; hi: bigint | string }>(
        sql`select count(*) as n, min(seq) as lo, max(seq) as hi from timeline_cursor`,
      );
      expect([Number(rows[0]!.n), Number(rows[0]!.lo), Number(rows[0]!.hi)]).toEqual([100, 20, 20]);
      await fresh.dispose();
    });
  });
}

for (const kind of storeKinds()) {
  test(`writeMarks: inbox marks alone, timeline acks alone and both in one batch, each written once [${kind}]`, async () => {
    const fresh = await freshStore(kind);
    const inboxMark = (id: bigint, deviceId = "d"): MarkRow => ({ userId: 1n, deviceId, messageId: id });
    const tl = (seq: number): MarkRow => ({ userId: 1n, deviceId: "d", messageId: 0n, conv: 7n, seq: BigInt(seq) });
    await writeMarks(fresh.store, [inboxMark(10n), inboxMark(11n), inboxMark(10n, "e")]);
    await writeMarks(fresh.store, [inboxMark(10n), inboxMark(12n)]); // 10 again: idempotent
    await writeMarks(fresh.store, [tl(1), tl(2)]);
    await writeMarks(fresh.store, [inboxMark(13n), tl(3)]);
    const marks = await fresh.store.rows<{ device_id: string; message_id: bigint | string }>(
      sql`select device_id, message_id from delivery_mark order by device_id, message_id`,
    );
    expect(marks.map((m) => `${m.device_id}:${m.message_id}`)).toEqual(["d:10", "d:11", "d:12", "d:13", "e:10"]);
    const [cur] = await fresh.store.rows<{ seq: bigint | string }>(sql`select seq from timeline_cursor where user_id = 1 and device_id = 'd' and conv_id = 7`);
    expect(Number(cur!.seq)).toBe(3);
    await fresh.dispose();
  });

  test(`writeMarks: inbox marks go in as plain inserts; a batch holding a mark already written, or one twice, is written again [${kind}]`, async () => {
    const fresh = await freshStore(kind);
    const m = (id: bigint, deviceId = "d"): MarkRow => ({ userId: 1n, deviceId, messageId: id });
    const rewrites = () => metrics.dbRewrites.value;
    const before = rewrites();
    await writeMarks(fresh.store, [m(10n), m(11n), m(10n, "e")]);
    expect(rewrites()).toBe(before); // all new: one plain statement
    await writeMarks(fresh.store, [m(12n), m(11n)]); // 11 again (an ack sent twice): refused whole, written again
    expect(rewrites()).toBe(before + 1);
    await writeMarks(fresh.store, [m(13n), m(13n), m(14n)]); // twice in one batch
    expect(rewrites()).toBe(before + 2);
    const rows = await fresh.store.rows<{ device_id: string; message_id: bigint | string }>(
      sql`select device_id, message_id from delivery_mark order by device_id, message_id`,
    );
    expect(rows.map((r) => `${r.device_id}:${r.message_id}`)).toEqual(["d:10", "d:11", "d:12", "d:13", "d:14", "e:10"]);
    await fresh.dispose();
  });

  test(`writeMarks keeps at most ABOVE_MAX ranges past a hole, the lowest ones [${kind}]`, async () => {
    const fresh = await freshStore(kind);
    // Every second number from 3 on: each its own range behind the hole at 2.
    const acks = (from: number, n: number): MarkRow[] =>
      Array.from({ length: n }, (_, i) => ({ userId: 1n, deviceId: "d", messageId: 0n, conv: 7n, seq: BigInt(from + 2 * i) }));
    await writeMarks(fresh.store, [{ userId: 1n, deviceId: "d", messageId: 0n, conv: 7n, seq: 1n }, ...acks(3, ABOVE_MAX + 10)]);
    const [row] = await fresh.store.rows<{ above: string }>(sql`select above::text as above from timeline_cursor`);
    const runs = parseSeqRuns(row!.above);
    expect(runs.length).toBe(ABOVE_MAX);
    expect(runs[0]).toEqual([3n, 3n]);
    expect(runs.at(-1)).toEqual([BigInt(3 + 2 * (ABOVE_MAX - 1)), BigInt(3 + 2 * (ABOVE_MAX - 1))]);
    await fresh.dispose();
  });
}
