/**
 * Where the real services are for tests. The preload fills these in (from
 * DATABASE_URL / REDIS_URL, else the local defaults when they answer) or
 * stops the run: real-database tests are never skipped silently.
 */
export const DEFAULT_PG = "postgres://postgres@127.0.0.1:5432/postgres";
export const DEFAULT_REDIS = "redis://127.0.0.1:6379";

export const testEnv = {
  get pgUrl(): string | undefined {
    return process.env.IBIS_TEST_PG_URL || undefined;
  },
  get redisUrl(): string | undefined {
    return process.env.IBIS_TEST_REDIS_URL || undefined;
  },
};
