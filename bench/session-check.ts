/**
 * session-check: the cost of the check behind every token on a cache miss —
 * one batched query for N (user, device session) pairs (src/domain/auth/
 * sessions.ts `sessionsAmong`, users ⋈ auth_session) against the account-only
 * query it replaced (`users.id in (…) and deleted_at is null`).
 *
 *   DATABASE_URL=postgres://… bun bench/session-check.ts [--n 1000] [--rounds 30]
 */
import { and, inArray, isNull } from "drizzle-orm";
import { authSessions, users } from "../src/db/schema/index.ts";
import { DeviceSessions } from "../src/domain/auth/sessions.ts";
import { TokenService } from "../src/domain/auth/tokens.ts";
import { freshStore } from "../test/support/stores.ts";
import { num, parseArgs } from "./lib/args.ts";

const argv = parseArgs();
const N = num(argv, "n", 1000);
const ROUNDS = num(argv, "rounds", 30);
process.env.IBIS_TEST_PG_URL ||= process.env.DATABASE_URL ?? "";
const ts = await freshStore(process.env.IBIS_TEST_PG_URL ? "postgres" : "pglite");
try {
  const ids = Array.from({ length: N }, (_, i) => 900000000000000000n + BigInt(i));
  await ts.store.db.insert(users).values(ids.map((id) => ({ id, account: `b${id}`, passwordHash: "x" })));
  await ts.store.db.insert(authSessions).values(ids.map((id) => ({ userId: id, deviceId: "phone", gen: 1, refreshJti: "j" })));
  const sessions = new DeviceSessions(ts.store, new TokenService({ secret: "x".repeat(32), accessTtlSec: 60, refreshTtlSec: 60, clockSkewSec: 0 }), Date.now);
  const keys = ids.map((userId) => ({ userId, deviceId: "phone" }));
  const time = async (f: () => Promise<unknown>) => {
    const out: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const t = performance.now();
      await f();
      out.push(performance.now() - t);
    }
    out.sort((a, b) => a - b);
    return { p50: +out[out.length >> 1]!.toFixed(2), p90: +out[Math.floor(out.length * 0.9)]!.toFixed(2) };
  };
  await sessions.sessionsAmong(keys); // warm both plans and the buffer cache first
  const accountOnly = await time(() => ts.store.db.select({ id: users.id }).from(users).where(and(inArray(users.id, ids), isNull(users.deletedAt))));
  const withSessions = await time(() => sessions.sessionsAmong(keys));
  console.log(JSON.stringify({ store: ts.store.kind, pairs: N, rounds: ROUNDS, account_only_ms: accountOnly, with_sessions_ms: withSessions }));
} finally {
  await ts.dispose();
}
