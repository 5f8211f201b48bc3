import { PGlite } from "@electric-sql/pglite";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { migrate } from "../../src/db/migrate.ts";
import { migrations } from "../../src/db/migrations.gen.ts";
import { sql, type SQL } from "drizzle-orm";
import { openStore, type Store, type StoreKind } from "../../src/db/store.ts";
import { testEnv } from "./env.ts";

const schemaHash = new Bun.CryptoHasher("sha256")
  .update(migrations.map((m) => m.hash).join(","))
  .digest("hex")
  .slice(0, 12);
const CACHE_DIR = join(import.meta.dir, "../../node_modules/.cache/ibis");
const TEMPLATE_FILE = join(CACHE_DIR, `pglite-${schemaHash}.tar`);

let pgliteTemplate: Promise<Blob> | undefined;

/** PostgreSQL's plan for `q` (EXPLAIN), one line per node: what the plan tests match. */
export async function explainPlan(store: Store, q: SQL): Promise<string> {
  return (await store.rows<{ "QUERY PLAN": string }>(sql`explain ${q}`)).map((r) => r["QUERY PLAN"]).join("\n");
}

/** The PGlite client under a PGlite store (its internals, for tests that look at them). */
export const pgliteClient = <C = PGlite>(store: Store): C => (store.db as unknown as { $client: C }).$client;

/**
 * A migrated PGlite data directory, dumped once and cached on disk by schema
 * hash: initdb (~5 s, ~1 GB) runs once per schema, not once per suite.
 */
export function pgliteTemplateBlob(): Promise<Blob> {
  pgliteTemplate ??= (async () => {
    if (existsSync(TEMPLATE_FILE)) return new Blob([readFileSync(TEMPLATE_FILE)]);
    const store = await openStore({ url: "memory://", migrate: false });
    await migrate(store);
    const client = pgliteClient(store);
    const dump = await client.dumpDataDir("none");
    await store.close();
    mkdirSync(CACHE_DIR, { recursive: true });
    writeFileSync(TEMPLATE_FILE, new Uint8Array(await dump.arrayBuffer()));
    return dump;
  })();
  return pgliteTemplate;
}

function dbUrl(base: string, name: string): string {
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

let pgTemplate: Promise<string> | undefined;

/** A migrated PostgreSQL template database per schema hash; test databases are cloned from it. */
async function postgresTemplate(adminUrl: string): Promise<string> {
  pgTemplate ??= (async () => {
    const name = `ibis_tpl_${schemaHash}`;
    const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
    try {
      await admin`select pg_advisory_lock(${0x1b17})`;
      const exists = await admin`select 1 from pg_database where datname = ${name}`;
      if (exists.length === 0) {
        await admin.unsafe(`create database "${name}"`);
        const store = await openStore({ url: dbUrl(adminUrl, name), poolSize: 1 });
        await store.close();
      }
      await admin`select pg_advisory_unlock(${0x1b17})`;
    } finally {
      await admin.end();
    }
    return name;
  })();
  return pgTemplate;
}

export interface TestStore {
  readonly store: Store;
  /** Connection string of this store (PostgreSQL) or "memory://" (PGlite). */
  readonly url: string;
  /** Closes the store and drops its database. */
  dispose(): Promise<void>;
}

/** A fresh, migrated, empty store of the given kind. */
export async function freshStore(kind: StoreKind): Promise<TestStore> {
  if (kind === "pglite") {
    const store = await openStore({ url: "memory://", pgliteTemplate: await pgliteTemplateBlob(), migrate: false });
    return { store, url: "memory://", dispose: () => store.close() };
  }
  const url = await freshPostgresDatabase();
  const store = await openStore({ url: url.url, poolSize: 4, migrate: false });
  return {
    store,
    url: url.url,
    dispose: async () => {
      await store.close();
      await url.drop();
    },
  };
}

/** A new PostgreSQL database cloned from the migrated template (for multi-process tests). */
export async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = testEnv.pgUrl;
  if (!adminUrl) throw new Error("PostgreSQL is not configured for tests (see test/support/preload.ts)");
  const template = await postgresTemplate(adminUrl);
  const name = `ibis_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}" template "${template}"`);
  } finally {
    await admin.end();
  }
  return {
    url: dbUrl(adminUrl, name),
    drop: async () => {
      const a = postgres(adminUrl, { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await a.end();
      }
    },
  };
}

/** Store kinds every storage-touching suite runs on. PostgreSQL is always included (the preload guarantees it or stops). */
export function storeKinds(): StoreKind[] {
  return testEnv.pgUrl ? ["pglite", "postgres"] : ["pglite"];
}
