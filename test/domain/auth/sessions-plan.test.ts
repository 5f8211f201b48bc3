/**
 * The handshake's session check (DeviceSessions.sessionsAmong) must probe
 * users and auth_session by key for each handshake in the batch, not read the
 * tables whole: on PostgreSQL with large tables, before any ANALYZE (a fresh
 * deployment, a signup burst) and after it. And its answers: a generation, a
 * device without a session (0), an account that does not exist ("gone").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { DeviceSessions, sessionsAmongQuery } from "../../../src/domain/auth/sessions.ts";
import { TokenService } from "../../../src/domain/auth/tokens.ts";
import { explainPlan, freshStore, type TestStore } from "../../support/stores.ts";

const N = 20_000;
const KEYS = Array.from({ length: 64 }, (_, i) => ({ userId: BigInt(1000 + i * 300), deviceId: i === 5 ? "other" : "d" }));

describe("sessionsAmong probes by key [postgres]", () => {
  let ts: TestStore;
  beforeAll(async () => {
    ts = await freshStore("postgres");
    await ts.store.db.execute(sql`insert into users (id, account, password_hash, created_at, updated_at)
      select 1000 + i, 'u' || i, '!', 0, 0 from generate_series(0, ${N - 1}) i`);
    await ts.store.db.execute(sql`insert into auth_session (user_id, device_id, gen, created_at, updated_at)
      select 1000 + i, 'd', 1 + i % 3, 0, 0 from generate_series(0, ${N - 1}) i`);
  });
  afterAll(() => ts.dispose());

  const noScans = async () => {
    const text = await explainPlan(ts.store, sessionsAmongQuery(KEYS));
    expect(text).not.toMatch(/Seq Scan on users\b/);
    expect(text).not.toMatch(/Seq Scan on auth_session\b/);
  };

  test("before ANALYZE", noScans);

  test("after ANALYZE", async () => {
    await ts.store.db.execute(sql`analyze`);
    await noScans();
  });

  test("one row per key, in order: a session's generation, none for a device without one", async () => {
    const rows = await ts.store.fixed<{ ord: number | string; deleted: boolean | null; gen: number | null }>(sessionsAmongQuery(KEYS));
    expect(rows.map((r) => Number(r.ord))).toEqual(KEYS.map((_, i) => i + 1));
    expect(rows[0]!.gen).toBe(1);
    expect(rows[1]!.gen).toBe(1 + (300 % 3));
    expect(rows[5]!.gen).toBeNull();
    expect(rows.every((r) => r.deleted === false)).toBe(true);
  });

  test("sessionsAmong: live with its generation, 0 without a session, gone without an account", async () => {
    const tokens = new TokenService({ secret: "x".repeat(32), accessTtlSec: 60, refreshTtlSec: 60, clockSkewSec: 300 });
    const facts = await new DeviceSessions(ts.store, tokens, Date.now).sessionsAmong([
      { userId: 1000n, deviceId: "d" },
      { userId: 1000n, deviceId: "elsewhere" },
      { userId: 1n, deviceId: "d" }, // no such account: a token signed for it (a reset database, the same key) is refused
    ]);
    expect(facts).toEqual([1, 0, "gone"]);
  });
});
