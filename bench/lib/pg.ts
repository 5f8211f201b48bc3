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
 * load: the median of `select 1` round trips, and of one-row inserts into a probe table, each its own
 * transaction (a commit that wrote WAL waits for its flush while `synchronous_commit` is on; one that wrote
 * none, such as `select txid_current()`, does not). Their difference is about the flush, which sets how long a
 * C2C batch waits and differs several-fold between machines of one kind (bench/FINDINGS.md).
 */
export interface PgRoundTrip {
  /** Round trips of each kind timed (the figures are their medians). */
  samples: number;
  query_us: number;
  commit_us: number;
  /** The session's setting: a commit waits for its local WAL flush unless it is "off". */
  synchronous_commit: string;
}

let measured: PgRoundTrip | undefined;

/** The last `measurePgRoundTrip` result of this process (results record it), if any. */
export const pgRoundTrip = (): PgRoundTrip | undefined => measured;

/** Measures on `sql` (one connection: a session setting applies) and leaves nothing behind. */
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
  const setting = (await sql<{ setting: string }[]>`select current_setting('synchronous_commit') as setting`)[0]!.setting;
  await sql`create table bench_commit_probe (n int)`;
  try {
    const query_us = await time(() => sql`select 1`);
    const commit_us = await time(() => sql`insert into bench_commit_probe values (1)`);
    // Each insert its own transaction, or the figure is not a commit's.
    const { commits } = (await sql<{ commits: number }[]>`select count(distinct xmin::text)::int as commits from bench_commit_probe`)[0]!;
    if (commits !== n) throw new Error(`measurePgRoundTrip: ${commits} transactions for ${n} inserts`);
    measured = { samples: n, query_us, commit_us, synchronous_commit: setting };
    return measured;
  } finally {
    await sql`drop table bench_commit_probe`;
  }
}
