import { PGlite, types, type QueryOptions, type Transaction } from "@electric-sql/pglite";
import { sql, type SQL } from "drizzle-orm";
import { PgDialect, type PgDatabase, type PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { connect as netConnect, type Socket } from "node:net";
import postgres from "postgres";
import * as schema from "./schema/index.ts";
import { migrate } from "./migrate.ts";
import { singleHost, unixSocketOf } from "./pg-url.ts";
import { pgliteAssets } from "./pglite-assets.ts";
import { PreparedStatements } from "./pglite-prepared.ts";

export type Schema = typeof schema;
/** The drizzle handle every repository takes: identical API on PGlite and PostgreSQL. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type StoreKind = "pglite" | "postgres";

export interface Store {
  readonly kind: StoreKind;
  readonly db: Db;
  /** Raw SQL returning rows, normalised across both drivers. */
  rows<T = Record<string, unknown>>(query: SQL): Promise<T[]>;
  /**
   * A fixed statement text with positional parameters ($1…), prepared once per
   * connection (PGlite: src/db/pglite-prepared.ts): the delivery writer's hot
   * statements skip drizzle's builder and the parse and plan on every batch.
   * A Uint8Array parameter is the UTF-8 of a `text` parameter's value, sent
   * as it is (a large payload is not decoded to a string to be encoded again;
   * an array literal's bytes, ArrayBytes, where the statement casts it).
   */
  query<T = Record<string, unknown>>(text: string, params: readonly unknown[]): Promise<T[]>;
  /**
   * `rows` for a statement whose text never varies with its arguments (lists
   * travel as array parameters): prepared once per connection, as `query`.
   * Drizzle runs every query unprepared, and postgres.js then asks the server
   * for the parameter types first: two round trips and a parse and plan each
   * time, on the handshake's critical path. Never for texts that vary (a
   * prepared statement per variant would pile up on every connection). The
   * text is compiled on every call: a long one run often is compiled once
   * instead (src/db/statement.ts) and run through `query`.
   */
  fixed<T = Record<string, unknown>>(query: SQL): Promise<T[]>;
  /**
   * `query` for the delivery writer's message batches. On PostgreSQL they
   * have a connection of their own and a second batch is pipelined behind
   * the one in flight: the backend finds it waiting when its commit is done
   * (no wake-up, no second backend: bench/FINDINGS.md, twenty-sixth section).
   * Behind a statement there longer than `pipelineWithinMs` (a lock wait, a
   * stalled commit) it goes to the pool instead; so does a 16 MiB message
   * (`query`), which never holds this connection. PGlite: `query`.
   */
  writes<T = Record<string, unknown>>(text: string, params: readonly unknown[]): Promise<T[]>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** DATABASE_URL: "" → PGlite in dataDir, "memory://" → in-memory PGlite, postgres://… → PostgreSQL. */
  readonly url: string;
  readonly dataDir?: string;
  readonly poolSize?: number;
  /** A PGlite data-directory dump to start from (tests' template; skips initdb). */
  readonly pgliteTemplate?: Blob;
  readonly migrate?: boolean;
  /** PostgreSQL: `writes` pipelines a batch behind one in flight for less than this (tests lengthen it). */
  readonly pipelineWithinMs?: number;
}

/**
 * A second message batch is pipelined on the writer's connection only behind
 * one that went to the backend less than this long ago: about a commit under
 * load here (98 % of commits within 5 ms, bench/FINDINGS.md 2026-11-28). Behind
 * an older one (waiting for a lock, a stalled backend) it goes to the pool,
 * where it cannot be held up by it.
 */
export const PIPELINE_WITHIN_MS = 5;

/** Rows of a `db.execute` result: postgres.js returns an array, PGlite `{ rows }`. */
export function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

/** Whether a trivial query succeeds (health checks never throw). */
function answers(query: () => PromiseLike<unknown>): Promise<boolean> {
  return Promise.resolve(query()).then(
    () => true,
    () => false,
  );
}

export async function openStore(opts: StoreOptions): Promise<Store> {
  const store = opts.url.startsWith("postgres://") || opts.url.startsWith("postgresql://")
    ? openPostgres(opts.url, opts.poolSize ?? 10, opts.pipelineWithinMs ?? PIPELINE_WITHIN_MS)
    : await openPglite(opts);
  if (opts.migrate !== false) await migrate(store);
  return store;
}

/**
 * postgres.js opens plain `net.Socket`s, which leave Nagle's algorithm on: a
 * second small write on a connection (the next batch's Bind while the first
 * one's reply is still out) waited for the peer's delayed ACK, tens of ms on
 * loopback (libpq sets TCP_NODELAY for the same reason). With a socket
 * factory postgres.js treats the returned socket as connected: writes made
 * before the connect completes are queued by the socket, errors and the
 * connect timeout stay postgres.js's. Several hosts in one URL keep
 * postgres.js's own sockets (and its failover).
 */
function noDelaySocket(o: { host: string[]; port: number[]; path?: string }): Socket {
  const s = o.path ? netConnect(o.path) : netConnect({ host: o.host[0]!, port: o.port[0]! });
  s.setNoDelay(true);
  return s;
}

// Compiles `fixed` statements to text and parameters (drizzle's own compiler, stateless).
const dialect = new PgDialect();

/**
 * Bytes bound as a `text` parameter (oid 25) instead of postgres.js's default
 * for a Uint8Array (bytea, sent as hex); the driver's patch
 * (patches/postgres@3.4.9.patch) writes them into the Bind as they are.
 */
const TEXT_OID = 25;
function textBytes(client: postgres.Sql, params: readonly unknown[]): readonly unknown[] {
  for (let i = 0; i < params.length; i++) {
    if (params[i] instanceof Uint8Array) return params.map((p) => (p instanceof Uint8Array ? client.typed(p as never, TEXT_OID) : p));
  }
  return params;
}

function openPostgres(given: string, size: number, pipelineWithinMs: number): Store {
  const { url, path } = unixSocketOf(given);
  const single = singleHost(url);
  const connect = (max: number) =>
    postgres(url, {
      max,
      ...(path ? { path } : {}),
      ...(single ? { socket: noDelaySocket as never } : {}),
      onnotice: () => {},
      // int8 as bigint, so ids never pass through a number even in raw queries.
      types: { bigint: postgres.BigInt },
      // Reconnect delay in seconds after failed connects. postgres.js grows it to 20 s, so a node outlived a
      // database restart by that long (docs/delivery.md "store down"); one attempt per second at most is cheap.
      backoff: (retries: number) => (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** retries, 1),
      connection: { application_name: "ibis" },
    });
  // IBIS_DB_POOL counts both: the message batches' own connection is one of them (with a pool of one, they share it).
  const client = connect(Math.max(1, size - 1));
  const writer = size > 1 ? connect(1) : client;
  /** When each statement on the writer's connection became the one the backend runs, oldest first. */
  const heads: number[] = [];
  const run = async <T>(on: postgres.Sql, text: string, params: readonly unknown[]) =>
    (await on.unsafe(text, textBytes(on, params) as never[], { prepare: true })) as unknown as T[];
  const db = drizzlePostgres(client, { schema }) as unknown as Db;
  return {
    kind: "postgres",
    db,
    rows: async <T>(query: SQL) => rowsOf<T>(await db.execute(query)),
    query: <T>(text: string, params: readonly unknown[]) => run<T>(client, text, params),
    writes: <T>(text: string, params: readonly unknown[]) => {
      const t = performance.now();
      // One batch pipelined behind a young one; behind one that waits longer (a lock, a stalled commit), the pool.
      const onWriter = writer !== client && (heads.length === 0 || (heads.length === 1 && t - heads[0]! < pipelineWithinMs));
      if (!onWriter) return run<T>(client, text, params);
      heads.push(t);
      return run<T>(writer, text, params).finally(() => {
        heads.shift(); // answers come in order: the next one is the head from now
        if (heads.length) heads[0] = performance.now();
      });
    },
    fixed: async <T>(query: SQL) => {
      const q = dialect.sqlToQuery(query);
      return (await client.unsafe(q.sql, q.params as never[], { prepare: true })) as unknown as T[];
    },
    ping: () => answers(() => client`select 1`),
    close: async () => {
      await Promise.all([client.end({ timeout: 5 }), writer === client ? undefined : writer.end({ timeout: 5 })]);
    },
  };
}

/** The types drizzle asks PGlite to return as raw text, with the same parsers on every query. */
const DRIZZLE_RAW_TYPES: readonly number[] = [types.TIMESTAMP, types.TIMESTAMPTZ, types.INTERVAL, types.DATE, 1231, 1115, 1185, 1187, 1182];
const raw = (value: string) => value;

/**
 * Drizzle passes `parsers` with every PGlite query (its raw-text types), and
 * PGlite merges them into a copy of its 318-entry parser table per query
 * (~300 µs and a large garbage object each: 15 % of the node's CPU in a burst
 * of handshakes on the embedded store, bench/FINDINGS.md). Those types are
 * made raw text on the client once (no Ibis column has them) and drizzle's
 * per-query copy is dropped: the same rows, without the copy.
 */
function withoutQueryParsers(client: PGlite): PGlite {
  const table = (client as unknown as { parsers: Record<number, (v: string) => unknown> }).parsers;
  for (const t of DRIZZLE_RAW_TYPES) table[t] = raw;
  const strip = (o: QueryOptions | undefined) => {
    if (!o?.parsers || !Object.keys(o.parsers).every((k) => DRIZZLE_RAW_TYPES.includes(Number(k)))) return o;
    const { parsers: _, ...rest } = o;
    return rest;
  };
  const query: PGlite["query"] = (q, params, o) => client.query(q, params, strip(o));
  const transaction: PGlite["transaction"] = (fn) =>
    client.transaction((tx) => fn({ ...tx, query: (q, params, o) => tx.query(q, params, strip(o)), get closed() { return tx.closed; } }));
  // A proxy, not a copy: every other member is the client's own (its methods need the real `this`).
  return new Proxy(client, {
    get(target, key) {
      if (key === "query") return query;
      if (key === "transaction") return transaction;
      const v: unknown = Reflect.get(target, key);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/** Emscripten's in-memory file system, as far as growing a file goes. */
interface MemFs {
  expandFileStorage(node: MemFile, capacity: number): void;
}
interface MemFile {
  contents: Uint8Array | null;
  usedBytes: number;
}

/**
 * In-memory PGlite keeps every table, index and WAL file in Emscripten's
 * MEMFS, which grows a file past 1 MiB by 12.5 % and copies all of it each
 * time: a table growing page by page was copied ~8 times over, 11 % of the
 * node's CPU in a C2C run (bench/FINDINGS.md). Doubling copies each byte
 * about once; the capacity not yet written is zero pages the kernel has not
 * given out (large arrays are mapped lazily), so resident memory stays what
 * is written.
 */
function growFilesByDoubling(client: PGlite): void {
  const fs = (client as unknown as { mod?: { MEMFS?: MemFs } }).mod?.MEMFS;
  if (!fs) return;
  fs.expandFileStorage = (node, capacity) => {
    const had = node.contents?.length ?? 0;
    if (had >= capacity) return;
    const grown = new Uint8Array(Math.max(capacity, had * 2, 256));
    if (node.contents && node.usedBytes > 0) grown.set(node.contents.subarray(0, node.usedBytes));
    node.contents = grown;
  };
}

async function openPglite(opts: StoreOptions): Promise<Store> {
  const dataDir = opts.url === "memory://" ? undefined : opts.dataDir || "./data";
  const client = await PGlite.create({
    ...(await pgliteAssets()),
    ...(dataDir ? { dataDir } : {}),
    ...(opts.pgliteTemplate ? { loadDataDir: opts.pgliteTemplate } : {}),
  });
  growFilesByDoubling(client);
  // In memory there is nothing to make durable: a commit need not flush its WAL into another in-memory file, and a
  // new WAL file need not be written full of zeros first (16 MiB per file, through the file system's copies).
  if (!dataDir) await client.exec("set synchronous_commit = off; set wal_init_zero = off");
  const prepared = new PreparedStatements(client);
  const db = drizzlePglite(withoutQueryParsers(client), { schema }) as unknown as Db;
  return {
    kind: "pglite",
    db,
    rows: async <T>(query: SQL) => rowsOf<T>(await db.execute(query)),
    query: <T>(text: string, params: readonly unknown[]) => prepared.query<T>(text, params),
    writes: <T>(text: string, params: readonly unknown[]) => prepared.query<T>(text, params),
    fixed: <T>(query: SQL) => {
      const q = dialect.sqlToQuery(query);
      return prepared.query<T>(q.sql, q.params);
    },
    ping: async () => !client.closed && (await answers(() => client.query("select 1"))),
    close: () => (client.closed ? Promise.resolve() : client.close()),
  };
}

export { sql };

export { arrayLiteral, decimalArray } from "./literals.ts";

/** A LIKE pattern matching values that start with `text` (`%`, `_` and `\` in it match themselves). */
export function likePrefix(text: string): string {
  return `${text.replace(/[\\%_]/g, "\\$&")}%`;
}
