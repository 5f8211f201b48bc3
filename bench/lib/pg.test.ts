import { afterAll, describe, expect, test } from "bun:test";
import { testEnv } from "../../test/support/env.ts";
import { measurePgRoundTrip, pgClient, pgRoundTrip } from "./pg.ts";

describe("[postgres] measurePgRoundTrip", () => {
  const sql = pgClient(testEnv.pgUrl!, { max: 1, onnotice: () => {} });
  afterAll(() => sql.end());

  test("times statements and durable commits, each commit a transaction of its own; results read the last figure", async () => {
    const before = BigInt((await sql`select txid_current() as x`)[0]!.x);
    const rt = await measurePgRoundTrip(sql, 50);
    const after = BigInt((await sql`select txid_current() as x`)[0]!.x);
    // 50 timed commits, each taking a transaction id (and so writing a commit record that waits for the flush);
    // other sessions of the suite may take ids meanwhile, never fewer.
    expect(after - before).toBeGreaterThanOrEqual(51n);
    expect(rt.query_us).toBeGreaterThan(0);
    expect(rt.commit_us).toBeGreaterThan(0);
    expect(pgRoundTrip()).toEqual(rt);
  });
});
