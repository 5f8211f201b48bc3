import { sql } from "drizzle-orm";
import { migrations as embedded, type EmbeddedMigration } from "./migrations.gen.ts";
import { rowsOf, type Store } from "./store.ts";

// Any constant shared by all Ibis nodes: serialises concurrent starts on one database.
const MIGRATION_LOCK = 0x1b15;

/**
 * Applies the embedded migrations (drizzle-kit generated, see scripts/embed-migrations.ts)
 * that this database has not seen, each in its own transaction, under an
 * advisory lock so nodes starting together do not race. Spec §9.6: at start.
 */
export async function migrate(store: Store, list: readonly EmbeddedMigration[] = embedded): Promise<string[]> {
  const applied: string[] = [];
  await store.db.execute(sql`create table if not exists ibis_migrations (
    tag text primary key, hash text not null, applied_at bigint not null)`);
  await store.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    const done = new Set(
      rowsOf<{ tag: string }>(await tx.execute(sql`select tag from ibis_migrations`)).map((r) => r.tag),
    );
    for (const m of list) {
      if (done.has(m.tag)) continue;
      for (const statement of m.statements) await tx.execute(sql.raw(statement));
      await tx.execute(
        sql`insert into ibis_migrations (tag, hash, applied_at) values (${m.tag}, ${m.hash}, ${Date.now()})`,
      );
      applied.push(m.tag);
    }
  });
  return applied;
}
