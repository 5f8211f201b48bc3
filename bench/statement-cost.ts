/**
 * What the reads behind every connect cost the node before they reach the database: compiling their drizzle SQL
 * per call (how `Store.fixed` runs a statement) against binding a text compiled once (src/db/statement.ts), for a
 * lone connect and a batch of 57 (a storm's typical batch). µs per statement. A probe, like json-exact.ts: it
 * prints, it writes no result file.
 *
 *   bun bench/statement-cost.ts
 */
import { PgDialect } from "drizzle-orm/pg-core";
import { openDevicesQuery, openDevicesStatement } from "../src/delivery/inbox.ts";
import { sessionsAmongQuery, sessionsAmongStatement } from "../src/domain/auth/sessions.ts";

const dialect = new PgDialect();
const BASE = 1n << 60n;
const N = 3000;

function usPer(f: () => unknown): number {
  for (let i = 0; i < 500; i++) f();
  const t = performance.now();
  for (let i = 0; i < N; i++) f();
  return ((performance.now() - t) * 1000) / N;
}

console.log("statement\tbatch\tcompiled per call µs\tbound µs");
for (const n of [1, 57]) {
  const reqs = Array.from({ length: n }, (_, i) => ({ userId: BASE + BigInt(i), deviceId: `conn-${i}`, fresh: BASE >> 2n }));
  const rows: [string, () => unknown, () => unknown][] = [
    ["device check", () => dialect.sqlToQuery(openDevicesQuery(reqs)), () => openDevicesStatement(reqs)],
    ["session check", () => dialect.sqlToQuery(sessionsAmongQuery(reqs)), () => sessionsAmongStatement(reqs)],
  ];
  for (const [name, compiled, bound] of rows) console.log(`${name}\t${n}\t${usPer(compiled).toFixed(1)}\t${usPer(bound).toFixed(1)}`);
}
