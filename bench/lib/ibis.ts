/**
 * The Ibis side of a scenario: starts `bun src/main.ts` (its normal start
 * mode) as its own process on a free loopback port, over in-memory PGlite or
 * a fresh PostgreSQL database, with every throttle lifted, then checks
 * whether /ws is served yet. Today the transport is a stub answering 501, so
 * scenarios print a note and run their baselines only.
 *
 * IBIS PLUG-IN POINT (users): `token()` mints access tokens with the same
 * HS256 secret the node is started with. When signup/friend/group APIs land,
 * add `provisionPairs(n)` / `provisionGroup(members)` here (REST calls through
 * the node's API, run before the rounds, outside any measured window).
 */
import postgres from "postgres";
import { TokenService } from "../../src/domain/auth/tokens.ts";
import { startServer, type RunningServer } from "./proc.ts";

export type IbisStore = "memory" | "postgres";

export interface IbisHandle {
  readonly name: string;
  readonly store: IbisStore;
  readonly server: RunningServer;
  /** svc.v2 handshake headers for (user, device). */
  headers(user: bigint, device: string): Promise<Record<string, string>>;
  stop(): Promise<void>;
}

const SECRET = "ibis-bench-token-secret-not-for-production-0123456789";
const PG_ADMIN = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** The `ibis listening` JSON log line carries the port picked for PORT=0. */
const listening = (line: string): number | undefined => {
  if (!line.includes('"ibis listening"')) return undefined;
  try {
    return (JSON.parse(line) as { port?: number }).port;
  } catch {
    return undefined;
  }
};

async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `ibis_bench_${process.pid}_${Date.now()}`;
  const admin = postgres(PG_ADMIN, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(PG_ADMIN);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end();
    },
  };
}

/** Starts Ibis; resolves `{ skipped }` with the reason when its /ws is not served yet. */
export async function startIbisSide(store: IbisStore, env: Record<string, string> = {}): Promise<IbisHandle | { skipped: string }> {
  const db = store === "postgres" ? await freshDatabase() : undefined;
  let server: RunningServer;
  try {
    server = await startServer({
      name: `ibis-${store}`,
      cmd: ["bun", "src/main.ts"],
      env: {
        PORT: "0",
        HOST: "127.0.0.1",
        DATABASE_URL: db?.url ?? "memory://",
        IBIS_THROTTLE_OFF: "1",
        IBIS_TOKEN_SECRET: SECRET,
        IBIS_LOG_LEVEL: "info",
        IBIS_ENV: "development",
        ...env,
      },
      ready: listening,
      timeoutMs: 60_000,
    });
  } catch (e) {
    await db?.drop();
    return { skipped: `ibis-${store} did not start: ${(e as Error).message.split("\n")[0]}` };
  }
  const tokens = new TokenService({ secret: SECRET, accessTtlSec: 86_400, refreshTtlSec: 86_400, clockSkewSec: 300 });
  const headers = async (user: bigint, device: string) => ({
    Authorization: `Bearer ${await tokens.issue(user, device, "access")}`,
    "X-Device-ID": device,
    "X-Device-Type": "desktop",
  });
  const stop = async () => {
    await server.stop();
    await db?.drop();
  };
  const probe = await fetch(`${server.http}/ws`, { headers: await headers(1n, "bench-probe") }).catch((e: Error) => e);
  if (probe instanceof Error || probe.status === 501) {
    await stop();
    const why = probe instanceof Error ? probe.message : "GET /ws answers 501 (transport not built yet)";
    return { skipped: `Ibis side skipped (ibis-${store}): ${why}` };
  }
  return { name: `ibis-${store}`, store, server, headers, stop };
}

/** Starts the requested Ibis sides (`--ibis off|memory|postgres|both`), collecting skip notes. */
export async function ibisSides(want: string, fallback: IbisStore[], notes: string[], env: Record<string, string> = {}): Promise<IbisHandle[]> {
  if (want === "off") return [];
  const stores: IbisStore[] = want === "both" ? ["memory", "postgres"] : want === "memory" || want === "postgres" ? [want] : fallback;
  const out: IbisHandle[] = [];
  for (const s of stores) {
    const r = await startIbisSide(s, env);
    if ("skipped" in r) {
      console.error(`NOTE: ${r.skipped}`);
      notes.push(r.skipped);
    } else out.push(r);
  }
  return out;
}
