/**
 * The bench's PostgreSQL server: BENCH_PG_URL, else the local server's Unix-domain socket when it has one (how
 * a node beside its database connects: docs/storage.md), else loopback TCP. Results say which (`pg_via`).
 */
import { existsSync } from "node:fs";
import postgres from "postgres";
import { unixSocketOf } from "../../src/db/pg-url.ts";
import { median } from "./stats.ts";

const SOCKET_DIR = "/var/run/postgresql";

export const PG_ADMIN =
  process.env.BENCH_PG_URL ??
  (existsSync(`${SOCKET_DIR}/.s.PGSQL.5432`) ? `postgres://postgres@localhost/postgres?host=${SOCKET_DIR}` : "postgres://postgres@127.0.0.1:5432/postgres");

/** How the Ibis node and the bench reach PostgreSQL: "unix socket" or "tcp". */
export const pgVia = (url = PG_ADMIN): "unix socket" | "tcp" => (unixSocketOf(url).path ? "unix socket" : "tcp");

/** A postgres.js client for `url`, over the socket its `?host=/dir` names (the node reads the same form). */
export function pgClient(url: string, options: postgres.Options<Record<string, postgres.PostgresType>>): postgres.Sql {
  const { url: parsed, path } = unixSocketOf(url);
  return postgres(parsed, { ...options, ...(path ? { path } : {}) });
}

/**
 * What one statement and one durable commit cost this machine's PostgreSQL, measured once per run before any
 * load: the median of `select 1` round trips, and of `select txid_current()` ones (a transaction that takes an
 * id, so its commit writes a record and waits for the WAL flush). Their difference is about the flush, which
 * sets how long a C2C batch waits and differs several-fold between machines of one kind (bench/FINDINGS.md).
 */
export interface PgRoundTrip {
  query_us: number;
  commit_us: number;
}

let measured: PgRoundTrip | undefined;

/** The last `measurePgRoundTrip` result of this process (results record it), if any. */
export const pgRoundTrip = (): PgRoundTrip | undefined => measured;

export async function measurePgRoundTrip(sql: postgres.Sql, n = 300): Promise<PgRoundTrip> {
  const time = async (q: () => Promise<unknown>): Promise<number> => {
    const us: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await q();
      us.push((performance.now() - t) * 1000);
    }
    return Math.round(median(us));
  };
  await sql`select 1`; // the connection opened outside the timing
  measured = { query_us: await time(() => sql`select 1`), commit_us: await time(() => sql`select txid_current()`) };
  return measured;
}
