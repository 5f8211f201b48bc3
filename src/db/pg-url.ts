/**
 * PostgreSQL connection URLs as postgres.js takes them (no I/O; the bench
 * reads them too, without the store's drivers).
 */

/** One host in a connection URL (a comma in the host part lists several; one in the password is taken as several too: harmless). */
export const singleHost = (url: string): boolean => !/^[a-z]+:\/\/(?:[^@/?]*@)?[^/?]*,/i.test(url);

/**
 * libpq's `?host=/dir` (a Unix-domain socket directory, as `psql` and libpq
 * take it; `postgres:///ibis?host=/var/run/postgresql`). postgres.js would
 * send `host` to the server as a setting and cannot parse a URL without a
 * host, so the directory becomes its `path` option and the URL gets a
 * placeholder host. A database on the node's own machine answers over the
 * socket at less cost per round trip than over loopback TCP (docs/storage.md).
 */
export function unixSocketOf(url: string): { url: string; path?: string } {
  const q = url.indexOf("?");
  if (q < 0) return { url };
  const params = new URLSearchParams(url.slice(q + 1));
  const dir = params.get("host");
  if (!dir?.startsWith("/")) return { url };
  params.delete("host");
  const port = params.get("port") ?? /^[a-z]+:\/\/(?:[^@/?]*@)?[^/?:]*:(\d+)/i.exec(url)?.[1] ?? "5432";
  params.delete("port");
  // `scheme://[user[:password]@]/db`: the empty host becomes `localhost` (never dialled: the path wins).
  const base = url.slice(0, q).replace(/^([a-z]+:\/\/(?:[^@/?]*@)?)(\/|$)/i, "$1localhost$2");
  const rest = params.toString();
  return { url: rest ? `${base}?${rest}` : base, path: `${dir.replace(/\/+$/, "")}/.s.PGSQL.${port}` };
}
