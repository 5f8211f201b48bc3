/**
 * Runs before any test file (bunfig.toml). Finds PostgreSQL and Redis —
 * DATABASE_URL / REDIS_URL, else the local defaults — and stops the run when
 * they are missing, unless IBIS_TEST_EMBEDDED_ONLY=1 says so explicitly (and
 * then says loudly what is skipped). Warms the PGlite template. After the
 * last file, kills the processes tests left running (children.ts).
 */
import { afterAll } from "bun:test";
import Redis from "ioredis";
import postgres from "postgres";
import { killLeftovers } from "./children.ts";
import { DEFAULT_PG, DEFAULT_REDIS } from "./env.ts";
import { pgliteTemplateBlob } from "./stores.ts";

const embeddedOnly = process.env.IBIS_TEST_EMBEDDED_ONLY === "1";

async function pgAnswers(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

async function redisAnswers(url: string): Promise<boolean> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000, retryStrategy: () => null });
  r.on("error", () => {});
  try {
    await r.connect();
    return (await r.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

const pgUrl = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : DEFAULT_PG;
const redisUrl = process.env.REDIS_URL || DEFAULT_REDIS;
const missing: string[] = [];
if (await pgAnswers(pgUrl)) process.env.IBIS_TEST_PG_URL = pgUrl;
else missing.push(`PostgreSQL at ${new URL(pgUrl).host}`);
if (await redisAnswers(redisUrl)) process.env.IBIS_TEST_REDIS_URL = redisUrl;
else missing.push(`Redis at ${new URL(redisUrl).host}`);

if (missing.length) {
  const text = `${missing.join(" and ")} did not answer.`;
  if (!embeddedOnly) {
    throw new Error(
      `${text} The test suite runs on real PostgreSQL and Redis: start them (see .ci/run), set DATABASE_URL / REDIS_URL, ` +
        "or run with IBIS_TEST_EMBEDDED_ONLY=1 to test on PGlite and the in-process bus alone.",
    );
  }
  console.warn(`\n!!! IBIS_TEST_EMBEDDED_ONLY=1: ${text} Those suites are SKIPPED in this run. !!!\n`);
}

await pgliteTemplateBlob();

// After the last file: a process some test started and did not stop is killed here, not left to
// hold the runner's output open (bun test exits without waiting for it), and named.
afterAll(() => {
  const left = killLeftovers();
  if (left.length) console.warn(`\n!!! ${left.length} process(es) a test started were still running at the end; killed:\n  ${left.join("\n  ")}\n`);
});
