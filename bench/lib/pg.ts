/**
 * The bench's PostgreSQL server: BENCH_PG_URL, else the local server's Unix-domain socket when it has one (how
 * a node beside its database connects: docs/storage.md), else loopback TCP. Results say which (`pg_via`).
 */
import { existsSync } from "node:fs";
import postgres from "postgres";
import { unixSocketOf } from "../../src/db/pg-url.ts";

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
