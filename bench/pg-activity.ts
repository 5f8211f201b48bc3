/**
 * Samples PostgreSQL's `pg_stat_activity` every `--every` ms for `--ms` ms and
 * prints which statements were active, with their wait events, by share of
 * samples: where the database spends a bench run (pg_stat_statements needs a
 * preload and a restart; this needs neither). Start it beside a bench run.
 *
 *   bun bench/pg-activity.ts [--url postgres://…] [--ms 4000] [--every 10] [--top 15]
 */
import { num, parseArgs, str } from "./lib/args.ts";
import { PG_ADMIN, pgClient } from "./lib/pg.ts";

const args = parseArgs();
const url = str(args, "url", PG_ADMIN);
const ms = num(args, "ms", 4000);
const every = num(args, "every", 10);
const top = num(args, "top", 15);

const sql = pgClient(url, { max: 1, onnotice: () => {} });
const counts = new Map<string, number>();
let samples = 0;
const end = performance.now() + ms;
while (performance.now() < end) {
  const rows = await sql<{ q: string; wait: string }[]>`select left(regexp_replace(query, '\\s+', ' ', 'g'), 90) as q,
      coalesce(wait_event_type || ':' || wait_event, 'CPU') as wait
    from pg_stat_activity where state = 'active' and backend_type = 'client backend' and pid <> pg_backend_pid()`;
  samples++;
  for (const r of rows) counts.set(`${r.wait}\t${r.q}`, (counts.get(`${r.wait}\t${r.q}`) ?? 0) + 1);
  await Bun.sleep(every);
}
await sql.end();
console.log(`${samples} samples of pg_stat_activity, every ${every} ms (share = samples in which the statement was active)`);
for (const [k, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * n) / samples).toFixed(0).padStart(4)} %\t${k}`);
