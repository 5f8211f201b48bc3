import { afterAll, describe, expect, test } from "bun:test";
import { testEnv } from "../../test/support/env.ts";
import { measurePgRoundTrip, pgClient, pgRoundTrip } from "./pg.ts";

describe("[postgres] measurePgRoundTrip", () => {
  // One connection: a session setting below applies to what is measured.
  const sql = pgClient(testEnv.pgUrl!, { max: 1, onnotice: () => {} });
  afterAll(() => sql.end());
  const probeTables = async () =>
    (await sql<{ n: number }[]>`select count(*)::int as n from pg_class where relname = 'bench_commit_probe'`)[0]!.n;

  test("times statements and durable commits, says whether commits wait for the flush, and leaves no table behind", async () => {
    const rt = await measurePgRoundTrip(sql, 40);
    expect(rt.samples).toBe(40);
    expect(rt.synchronous_commit).toBe("on"); // the server's default: each commit waited for its flush
    expect(rt.query_us).toBeGreaterThan(0);
    expect(rt.commit_us).toBeGreaterThan(0);
    expect(pgRoundTrip()).toEqual(rt);
    expect(await probeTables()).toBe(0);
  });

  test("a session that does not wait for the flush is reported as such", async () => {
    await sql`set synchronous_commit = off`;
    try {
      expect((await measurePgRoundTrip(sql, 10)).synchronous_commit).toBe("off");
    } finally {
      await sql`reset synchronous_commit`;
    }
    expect(await probeTables()).toBe(0);
  });
});
