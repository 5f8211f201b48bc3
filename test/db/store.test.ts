import { expect, test } from "bun:test";
import type { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { users } from "../../src/db/schema/index.ts";
import { openStore } from "../../src/db/store.ts";
import { testEnv } from "../support/env.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshPostgresDatabase, freshStore, pgliteClient, pgliteTemplateBlob, storeKinds } from "../support/stores.ts";

test("PGlite: drizzle queries read raw-text types as drizzle asks, without copying the parser table per query", async () => {
  const { store, dispose } = await freshStore("pglite");
  try {
    const client = pgliteClient<PGlite & { parsers: Record<number, unknown> }>(store);
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

test("a PostgreSQL URL with ?host=/dir connects over the Unix-domain socket [postgres]", async () => {
  const url = testEnv.pgUrl;
  if (!url) throw new Error("PostgreSQL is required: the real-database tests never skip (test/support/preload.ts)");
  const tcp = await openStore({ url, migrate: false, poolSize: 1 });
  const [row] = await tcp.rows<{ dirs: string; db: string; user: string }>(
    sql`select current_setting('unix_socket_directories') as dirs, current_database() as db, current_user as user`,
  );
  await tcp.close();
  const { dirs, db, user } = row!;
  const dir = dirs.split(",")[0]!.trim();
  expect(dir).toStartWith("/"); // the server this suite runs against listens on a socket (.ci/run starts it so)
  const { port, password } = new URL(url);
  const overSocket = `postgres://${encodeURIComponent(user)}${password ? `:${password}` : ""}@/${db}?host=${dir}&port=${port || 5432}`;
  const store = await openStore({ url: overSocket, migrate: false, poolSize: 1 });
  try {
    // inet_server_addr() is null on a Unix-domain socket connection, the server's address over TCP.
    expect(await store.rows(sql`select inet_server_addr() as addr, current_database() as db`)).toEqual([{ addr: null, db }]);
  } finally {
    await store.close();
  }
});

test("a PostgreSQL store opened through the no-delay socket factory answers, and answers again after its connections were killed", async () => {
  const url = testEnv.pgUrl;
  if (!url) throw new Error("PostgreSQL is required: the real-database tests never skip (test/support/preload.ts)");
  const store = await openStore({ url, migrate: false, poolSize: 2 });
  expect(await store.ping()).toBe(true);
  const [me] = await store.rows<{ pid: number }>(sql`select pg_backend_pid() as pid`);
  const admin = await openStore({ url, migrate: false, poolSize: 1 });
  await admin.rows(sql`select pg_terminate_backend(${me!.pid})`);
  let ok = false;
  for (let i = 0; i < 50 && !ok; i++) ok = await store.ping();
  expect(ok).toBe(true);
  // postgres.js waits out its end timeout (5 s) for the killed connection: closing is not what this test measures.
  void store.close();
  await admin.close();
}, 15_000);

test("queries one after another go to the connection that went idle last, not to each of the pool's connections in turn [postgres]", async () => {
  const url = testEnv.pgUrl;
  if (!url) throw new Error("PostgreSQL is required: the real-database tests never skip (test/support/preload.ts)");
  // Five: four for queries, one for the message batches (`writes`).
  const store = await openStore({ url, migrate: false, poolSize: 5 });
  try {
    // Four at once: the pool opens all four connections.
    const opened = await Promise.all(
      Array.from({ length: 4 }, () => store.query<{ pid: number }>("select pg_backend_pid() as pid from pg_sleep(0.05)", [])),
    );
    expect(new Set(opened.map((r) => r[0]!.pid)).size).toBe(4);
    // Then one at a time: each finds the warm connection its predecessor left (first-idle-first-used woke all four in turn).
    const pids = new Set<number>();
    for (let i = 0; i < 12; i++) pids.add((await store.query<{ pid: number }>("select pg_backend_pid() as pid", []))[0]!.pid);
    expect(pids.size).toBe(1);
  } finally {
    await store.close();
  }
});

test("writes: the message batches have a connection of their own (one of IBIS_DB_POOL's), pipelined, never behind the pool's queries; a pool of one shares it [postgres]", async () => {
  const url = testEnv.pgUrl;
  if (!url) throw new Error("PostgreSQL is required: the real-database tests never skip (test/support/preload.ts)");
  const store = await openStore({ url, migrate: false, poolSize: 3, pipelineWithinMs: 60_000 });
  const admin = await openStore({ url, migrate: false, poolSize: 1 });
  const LOCK = 0x1b5701;
  const lockHolder = (await admin.rows<{ pid: number }>(sql`select pg_backend_pid() as pid, pg_advisory_lock(${LOCK})`))[0]!.pid;
  // Both of the pool's connections wait for the lock.
  const blocked = [1, 2].map(() => store.query("select pg_advisory_lock_shared($1)", [LOCK]));
  try {
    const waiting = async () =>
      (await admin.rows<{ pid: number }>(sql`select pid from pg_locks where locktype = 'advisory' and not granted and objid = ${LOCK}`)).map((r) => r.pid);
    let pool: number[] = [];
    for (let i = 0; i < 200 && pool.length < 2; i++) pool = await waiting();
    expect(pool.length).toBe(2);
    // Two at once: answered while the pool is stuck, both on one backend that is none of the pool's (pipelined).
    const two = await Promise.all([1, 2].map(() => store.writes<{ pid: number }>("select pg_backend_pid() as pid", [])));
    const writer = two[0]![0]!.pid;
    expect(two[1]![0]!.pid).toBe(writer);
    expect([...pool, lockHolder]).not.toContain(writer);
  } finally {
    await admin.rows(sql`select pg_advisory_unlock(${LOCK})`);
    await Promise.all(blocked);
    await store.close();
    await admin.close();
  }
  // Behind a statement in flight longer than pipelineWithinMs (here: any), the next one goes to the pool, and is
  // answered while the writer's connection waits for a lock.
  const strict = await openStore({ url, migrate: false, poolSize: 3, pipelineWithinMs: 0 });
  const holder = await openStore({ url, migrate: false, poolSize: 1 });
  await holder.rows(sql`select pg_advisory_lock(${LOCK})`);
  try {
    const [head] = await strict.writes<{ pid: number }>("select pg_backend_pid() as pid", []);
    const stuck = strict.writes("select pg_advisory_lock_shared($1)", [LOCK]);
    const [next] = await strict.writes<{ pid: number }>("select pg_backend_pid() as pid", []);
    expect(next!.pid).not.toBe(head!.pid);
    await holder.rows(sql`select pg_advisory_unlock(${LOCK})`);
    await stuck;
    // Once answered, the writer's connection takes the next one again.
    expect((await strict.writes<{ pid: number }>("select pg_backend_pid() as pid", []))[0]!.pid).toBe(head!.pid);
  } finally {
    await holder.rows(sql`select pg_advisory_unlock_all()`);
    await strict.close();
    await holder.close();
  }
  // A pool of one: the batches share its connection.
  const one = await openStore({ url, migrate: false, poolSize: 1 });
  try {
    const [q] = await one.query<{ pid: number }>("select pg_backend_pid() as pid", []);
    const [w] = await one.writes<{ pid: number }>("select pg_backend_pid() as pid", []);
    expect(w!.pid).toBe(q!.pid);
  } finally {
    await one.close();
  }
});

for (const kind of storeKinds()) {
  test(`a Uint8Array parameter of query() is a text's UTF-8, bound as it is; large ones keep the connection's order [${kind}]`, async () => {
    const fresh = await freshStore(kind);
    try {
      const insert = `insert into messages (id, client_id, chat_type, from_id, to_id, payload, server_ts) values ($1::bigint, 'C2C.' || $1::text || '.1.a', 'C2C', 1, 2, $2, 1)`;
      const small = '{"t":"héllo ✓ 😀"}';
      const large = JSON.stringify({ t: `${"ü".repeat(70_000)}😀${"x".repeat(70_000)}` }); // past the driver's 64 KiB write threshold
      const enc = new TextEncoder();
      // A frame's view, not a buffer of its own: what the decoder hands on.
      const framed = (text: string) => {
        const b = enc.encode(`..${text}..`);
        return b.subarray(2, b.length - 2);
      };
      // Started together on one store: the large write's first use of the statement (describe, then bind), a small
      // string write and a select, pipelined; each lands whole, in its own row.
      const [, , , count] = await Promise.all([
        fresh.store.query(insert, ["1", framed(large)]),
        fresh.store.query(insert, ["2", small]),
        fresh.store.query(insert, ["3", framed(small)]),
        fresh.store.query<{ n: bigint | number | string }>("select count(*) as n from messages", []),
      ]);
      expect(Number(count![0]!.n)).toBeLessThanOrEqual(3);
      await fresh.store.query(insert, ["4", framed(large)]); // the prepared statement again
      // Two large byte parameters in one statement, between small ones, twice (described, then prepared).
      const two = `insert into messages (id, client_id, chat_type, from_id, to_id, payload, server_ts) values ($1::bigint, $2, 'C2C', 1, 2, $3 || $4, $5)`;
      await fresh.store.query(two, ["5", framed("C2C.5.1.a"), framed(large), framed(small), 1]);
      await fresh.store.query(two, ["6", "C2C.6.1.a", framed(large), framed(large), 1]);
      const back = await fresh.store.rows<{ id: bigint | string; payload: string }>(sql`select id, payload from messages order by id`);
      expect(back.map((r) => [String(r.id), r.payload])).toEqual([
        ["1", large], ["2", small], ["3", small], ["4", large], ["5", large + small], ["6", large + large],
      ]);
    } finally {
      await fresh.dispose();
    }
  });
}

test("a large parameter goes to PostgreSQL's socket in slices: what one connection is asked meanwhile waits behind it, in order; a connection killed mid-write is replaced [postgres]", async () => {
  const db = await freshPostgresDatabase();
  // One connection: every query below shares its socket, so the small ones are asked while the large one is still going out.
  const store = await openStore({ url: db.url, poolSize: 1, migrate: false });
  const admin = await openStore({ url: db.url, poolSize: 1, migrate: false });
  try {
    const insert = `insert into messages (id, client_id, chat_type, from_id, to_id, payload, server_ts) values ($1::bigint, 'C2C.' || $1::text || '.1.a', 'C2C', 1, 2, $2, 1)`;
    // Far past what the kernel takes at once on loopback: the driver writes a slice, waits for the drain, writes the next.
    const large = (c: string) => new TextEncoder().encode(JSON.stringify({ t: c.repeat(12 << 20) }));
    const a = large("a");
    const b = large("b");
    const done = await Promise.all([
      store.query(insert, ["1", a]),
      store.query(insert, ["2", '{"t":"small"}']),
      store.query(insert, ["3", b]),
      store.query<{ n: bigint | number | string }>("select count(*) as n from messages", []),
      store.query(insert, ["4", '{"t":"last"}']),
    ]);
    expect(Number(done[3]![0]!.n)).toBe(3); // asked after 1, 2 and 3 on the same connection: it sees all of them
    const back = await store.rows<{ id: bigint | string; n: number; head: string }>(
      sql`select id, length(payload) as n, left(payload, 7) as head from messages order by id`,
    );
    expect(back.map((r) => [String(r.id), Number(r.n), r.head])).toEqual([
      ["1", a.length, '{"t":"a'], ["2", 13, '{"t":"s'], ["3", b.length, '{"t":"b'], ["4", 12, '{"t":"l'],
    ]);

    // Killed while a large write is under way (PostgreSQL resets a socket it had not read to the end): the write
    // fails or lands, a query asked right after is answered, and the store answers again on a new connection
    // (nothing of the old socket's queue is left to hold the new one's writes; the driver used to hang here).
    const [me] = await store.rows<{ pid: number }>(sql`select pg_backend_pid() as pid`);
    const doomed = store.query(insert, ["5", large("c")]).then(() => "stored", () => "failed");
    await admin.rows(sql`select pg_terminate_backend(${me!.pid})`);
    expect(["stored", "failed"]).toContain(await doomed);
    let ok = false;
    for (let i = 0; i < 50 && !ok; i++) ok = await store.ping();
    expect(ok).toBe(true);
    await store.query(insert, ["6", '{"t":"after"}']);
    expect((await store.rows<{ id: bigint | string }>(sql`select id from messages where id = 6`)).length).toBe(1);
  } finally {
    await Promise.all([store.close(), admin.close()]);
    await db.drop();
  }
}, 60_000);

for (const kind of storeKinds()) {
  test(`message bodies: lz4 where the server has it, pglz otherwise; both store and read a 1 MiB payload [${kind}]`, async () => {
    const fresh = await freshStore(kind);
    const rows = await fresh.store.rows<{ attname: string; attcompression: string }>(
      sql`select attname, attcompression::text as attcompression from pg_attribute
        where attrelid = 'messages'::regclass and attname in ('payload', 'e2ee') order by attname`,
    );
    // PostgreSQL (Debian, built with lz4): 'l'; PGlite has no lz4 and keeps the default ('' = pglz).
    const want = kind === "postgres" ? "l" : "";
    expect(rows.map((r) => [r.attname, r.attcompression])).toEqual([["e2ee", want], ["payload", want]]);
    const big = JSON.stringify({ text: "x".repeat(1 << 20) });
    await fresh.store.query(`insert into messages (id, client_id, chat_type, from_id, to_id, payload, server_ts) values (1, 'C2C.1.1.a', 'C2C', 1, 2, $1, 1)`, [big]);
    const [back] = await fresh.store.rows<{ n: number | string; same: boolean }>(sql`select length(payload) as n, payload = ${big} as same from messages where id = 1`);
    expect([Number(back!.n), back!.same]).toEqual([big.length, true]);
    await fresh.dispose();
  });
}

for (const kind of storeKinds()) {
  test(`fixed: the same rows as rows, ids above 2^53 exact [${kind}]`, async () => {
    const { store, dispose } = await freshStore(kind);
    try {
      const big = (1n << 60n) + 7n;
      const query = () => sql`select x::bigint as id, ${"text"} as t from unnest(${`{${big},${big + 1n}}`}::bigint[]) as x where x > ${big - 1n}`;
      const want = await store.rows<{ id: bigint | string; t: string }>(query());
      expect(want.map((r) => BigInt(r.id))).toEqual([big, big + 1n]);
      for (let i = 0; i < 3; i++) expect(await store.fixed(query())).toEqual(want);
    } finally {
      await dispose();
    }
  });
}

test("fixed: prepared once on the connection (however often it runs), where rows prepares nothing [postgres]", async () => {
  const db = await freshPostgresDatabase();
  const store = await openStore({ url: db.url, poolSize: 1, migrate: false });
  try {
    const prepared = async () =>
      Number((await store.rows<{ n: number | string }>(sql`select count(*) as n from pg_prepared_statements where statement like '%as probe_fixed%'`))[0]!.n);
    for (let i = 0; i < 3; i++) await store.rows(sql`select ${i}::int as probe_fixed`);
    expect(await prepared()).toBe(0);
    for (let i = 0; i < 3; i++) expect(await store.fixed<{ probe_fixed: number }>(sql`select ${i}::int as probe_fixed`)).toEqual([{ probe_fixed: i }]);
    expect(await prepared()).toBe(1);
  } finally {
    await store.close();
    await db.drop();
  }
});

test("PGlite: in-memory files grow by doubling (MEMFS grew a file past 1 MiB by 12.5 %, copying all of it each time)", async () => {
  const { store, dispose } = await freshStore("pglite");
  try {
    const client = pgliteClient<{ mod: { MEMFS: { expandFileStorage(n: object, c: number): void } } }>(store);
    const MiB = 1 << 20;
    const cases: [string, number, number, number][] = [
      // [name, capacity held, used bytes, capacity asked] → doubled, or what was asked when that is more
      ["past 1 MiB: doubled", 2 * MiB, 2 * MiB, 2 * MiB + 1],
      ["asked for more than double: what was asked", 2 * MiB, MiB, 5 * MiB],
      ["small file: doubled", 1024, 1000, 1025],
    ];
    for (const [name, held, used, asked] of cases) {
      const contents = new Uint8Array(held);
      contents.fill(7, 0, used);
      const node = { contents, usedBytes: used };
      client.mod.MEMFS.expandFileStorage(node, asked);
      expect([name, node.contents.length]).toEqual([name, Math.max(2 * held, asked)]);
      expect(node.contents.subarray(0, used).every((b) => b === 7)).toBe(true);
      expect(node.contents[used]).toBe(0);
    }
    // Enough capacity already: nothing changes.
    const node = { contents: new Uint8Array(4096), usedBytes: 10 };
    const before = node.contents;
    client.mod.MEMFS.expandFileStorage(node, 4096);
    expect(node.contents).toBe(before);
    // The store still reads and writes past a few MiB.
    await store.query(`create table grow (b bytea)`, []);
    await store.query(`insert into grow select decode(repeat(md5(g::text), 4096), 'hex') from generate_series(1, 200) g`, []);
    const [row] = await store.rows<{ n: number | string }>(sql`select count(*) as n from grow`);
    expect(Number(row!.n)).toBe(200);
  } finally {
    await dispose();
  }
});

test("PGlite: commits flush their WAL on disk (DATA_DIR), not in memory (memory://: nothing to make durable)", async () => {
  const setting = async (store: Awaited<ReturnType<typeof openStore>>, name: string) =>
    Object.values((await store.rows<Record<string, string>>(sql.raw(`show ${name}`)))[0]!)[0];
  const dir = mkdtempSync(join(tmpdir(), "ibis-store-"));
  const onDisk = await openStore({ url: "", dataDir: dir, pgliteTemplate: await pgliteTemplateBlob(), migrate: false });
  const inMemory = await freshStore("pglite");
  try {
    expect([await setting(onDisk, "synchronous_commit"), await setting(onDisk, "wal_init_zero")]).toEqual(["on", "on"]);
    expect([await setting(inMemory.store, "synchronous_commit"), await setting(inMemory.store, "wal_init_zero")]).toEqual(["off", "off"]);
  } finally {
    await onDisk.close();
    await inMemory.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});
