/**
 * The Ibis side of a scenario: starts `bun src/main.ts` (its normal start
 * mode) as its own process on a free loopback port, over in-memory PGlite or
 * a fresh PostgreSQL database, with every throttle lifted, then checks
 * whether /ws is served yet (a 501 stub skips the Ibis side with a note).
 *
 * Provisioning (before the rounds, outside any measured window): the
 * handshake refuses tokens of users that do not exist, so scenarios create
 * real users. On PostgreSQL they are bulk-inserted (users, friend rows in
 * both directions) straight into the node's fresh database: thousands per
 * second. On `memory://` the database lives inside the server process, so
 * they go through REST (`/passport/signup`, `/friend/add` + `/confirm`), with
 * argon2id at its 1 MiB floor (IBIS_PASSWORD_MEMORY_KIB) so signup costs ~ms.
 * Groups always go through REST (`/group/add`, then `/group_member/join` past 1,000 members). Tokens are
 * minted locally with the node's fixed IBIS_TOKEN_SECRET.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import postgres from "postgres";
import { TokenService } from "../../src/domain/auth/tokens.ts";
import { ALLOCATOR_DEFAULTS } from "../../src/runtime/allocator.ts";
import { IdGenerator } from "../../src/ids/tsid.ts";
import { encodeFrame, FrameType } from "../../src/protocol/frame.ts";
import { parseJson, stringifyJson, utf8 } from "../../src/protocol/json.ts";
import { envList } from "./args.ts";
import { measurePgRoundTrip, PG_ADMIN, pgClient } from "./pg.ts";
import { ROOT, startServer, type RunningServer } from "./proc.ts";

export type IbisStore = "memory" | "postgres";

/**
 * The node's command line: `bun src/main.ts`, under `bun --cpu-prof` when BENCH_IBIS_PROFILE names a directory,
 * after BENCH_IBIS_PREFIX's words when it has any. A prefix that is set but empty is no prefix: an A/B's default
 * arm often sets it to "" (an empty word would be the command, and the node would never start).
 */
export function nodeCommand(env: Record<string, string | undefined>): string[] {
  const prefix = (env.BENCH_IBIS_PREFIX ?? "").split(/\s+/).filter((w) => w !== "");
  const profile = env.BENCH_IBIS_PROFILE;
  return [...prefix, "bun", ...(profile ? ["--cpu-prof", "--cpu-prof-dir", profile] : []), "src/main.ts"];
}

/**
 * The variables a profiled node starts with: the allocator's defaults, set here so that `src/main.ts` does not start
 * itself again. Under `bun --cpu-prof` the profiler's thread signals the main thread (SIGPWR) every sample, and one
 * pending across the `execve` kills the new image, whose SIGPWR is back at its default action: 8 of 60 profiled
 * starts died with exit code 158 here. The node then runs as it does unprofiled, one start fewer.
 */
export const profiledEnv = (env: Record<string, string | undefined>): Record<string, string> =>
  env.BENCH_IBIS_PROFILE ? { ...ALLOCATOR_DEFAULTS } : {};

export interface IbisHandle {
  readonly name: string;
  readonly store: IbisStore;
  readonly server: RunningServer;
  /** svc.v2 handshake headers for (user, device). */
  headers(user: bigint, device: string): Promise<Record<string, string>>;
  /** Access token for (user, device). */
  token(user: bigint, device: string): Promise<string>;
  /** Creates `n` real users; resolves their ids. */
  users(n: number): Promise<bigint[]>;
  /** Makes each pair friends (both directions). */
  befriend(pairs: readonly (readonly [bigint, bigint])[]): Promise<void>;
  /** Creates a group owned by `owner` with `members`; resolves its id. */
  group(owner: bigint, members: readonly bigint[]): Promise<bigint>;
  /** An authenticated REST POST as `user`; resolves the envelope payload. */
  post(user: bigint, path: string, body: unknown): Promise<unknown>;
  /** PostgreSQL side: a connection to the node's database (its own statistics, bulk provisioning such as channel subscriptions). */
  readonly pg?: postgres.Sql;
  stop(): Promise<void>;
}

const SECRET = "ibis-bench-token-secret-not-for-production-0123456789";

/** The `ibis listening` JSON log line carries the port picked for PORT=0. */
const listening = (line: string): number | undefined => {
  if (!line.includes('"ibis listening"')) return undefined;
  try {
    return (JSON.parse(line) as { port?: number }).port;
  } catch {
    return undefined;
  }
};

export interface Db {
  url: string;
  sql: postgres.Sql;
  drop(): Promise<void>;
}

/** A new, empty PostgreSQL database on the bench's server (dropped by `drop`). */
export async function freshDatabase(): Promise<Db> {
  const name = `ibis_bench_${process.pid}_${Date.now()}`;
  const admin = pgClient(PG_ADMIN, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(PG_ADMIN);
  url.pathname = `/${name}`;
  const sql = pgClient(url.toString(), { max: 2, onnotice: () => {} });
  await measurePgRoundTrip(sql);
  return {
    url: url.toString(),
    sql,
    async drop() {
      await sql.end().catch(() => {});
      await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end();
    },
  };
}

/** BENCH_IBIS_ENV="K=V,K2=V2": variables for the Ibis node alone (A/B runs), not for the baseline or the clients. */
const serverEnv = (): Record<string, string> => envList(process.env.BENCH_IBIS_ENV ?? "");

/**
 * The checkout a node runs from (`tree`, default this one): another tree must hold `src/main.ts` and its own
 * `node_modules` (a git worktree shares none; bench/README.md "Two trees, paired").
 */
export function checkTree(tree: string): string {
  const dir = resolve(ROOT, tree);
  for (const need of ["src/main.ts", "node_modules"]) {
    if (!existsSync(join(dir, need))) throw new Error(`--compare-tree ${tree}: ${join(dir, need)} is missing (a worktree needs node_modules: bun install there, or link this tree's)`);
  }
  return dir;
}

/** Starts Ibis (from `tree`, default this checkout); resolves `{ skipped }` with the reason when its /ws is not served yet. */
export async function startIbisSide(store: IbisStore, env: Record<string, string> = {}, tree?: string): Promise<IbisHandle | { skipped: string }> {
  const cwd = tree === undefined ? undefined : checkTree(tree);
  const db = store === "postgres" ? await freshDatabase() : undefined;
  let server: RunningServer;
  try {
    server = await startServer({
      name: `ibis-${store}`,
      // BENCH_IBIS_PROFILE=<dir>: the node writes a CPU profile there when it stops (bun --cpu-prof).
      // BENCH_IBIS_PREFIX="chrt -b 0": a command the node runs under (A/B of how it is started; docs/operations.md).
      cmd: nodeCommand(process.env),
      env: {
        PORT: "0",
        HOST: "127.0.0.1",
        DATABASE_URL: db?.url ?? "memory://",
        IBIS_THROTTLE_OFF: "1",
        IBIS_TOKEN_SECRET: SECRET,
        IBIS_LOG_LEVEL: "info",
        IBIS_ENV: "development",
        IBIS_PASSWORD_MEMORY_KIB: "1024", // the floor: signup for benches costs ~ms, not ~50 ms
        ...profiledEnv(process.env),
        ...serverEnv(),
        ...env,
      },
      ready: listening,
      timeoutMs: 60_000,
      ...(cwd ? { cwd } : {}),
      // A profiled node writes its profile as it exits: killed 3 s after SIGTERM, an embedded node wrote none.
      ...(process.env.BENCH_IBIS_PROFILE ? { stopGraceMs: 60_000 } : {}),
    });
  } catch (e) {
    await db?.drop();
    return { skipped: `ibis-${store} did not start: ${(e as Error).message.split("\n")[0]}` };
  }
  const tokens = new TokenService({ secret: SECRET, accessTtlSec: 86_400, refreshTtlSec: 86_400, clockSkewSec: 300 });
  const token = (user: bigint, device: string) => tokens.issue(user, device, "access");
  const headers = async (user: bigint, device: string) => ({
    Authorization: `Bearer ${await token(user, device)}`,
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
  const rest = restClient(server.http, token);
  let made = 0;
  const users = async (n: number): Promise<bigint[]> => {
    const first = made;
    made += n;
    if (!db) return pooled(n, (i) => rest.signup(`bench${first + i}`));
    // Bulk: ids above 2^53 (as real TSIDs are), one multi-row insert per 5,000.
    const ids = Array.from({ length: n }, (_, i) => BENCH_ID_BASE + BigInt(first + i));
    const now = Date.now();
    for (let i = 0; i < n; i += 5000) {
      const rows = ids.slice(i, i + 5000).map((id) => ({ id: id.toString(), account: `bench${id}`, password_hash: "!", created_at: now, updated_at: now }));
      await db.sql`insert into users ${db.sql(rows)}`;
    }
    return ids;
  };
  const befriend = async (pairs: readonly (readonly [bigint, bigint])[]): Promise<void> => {
    if (!db) {
      await pooled(pairs.length, async (i) => {
        const [x, y] = pairs[i]!;
        await rest.call(x, "/api/v1/friend/add", { to: y });
        await rest.call(y, "/api/v1/friend/confirm", { from: x });
      });
      return;
    }
    const now = Date.now();
    const rows = pairs.flatMap(([x, y]) => [
      { user_id: x.toString(), friend_id: y.toString(), created_at: now },
      { user_id: y.toString(), friend_id: x.toString(), created_at: now },
    ]);
    for (let i = 0; i < rows.length; i += 5000) await db.sql`insert into friend ${db.sql(rows.slice(i, i + 5000))}`;
  };
  // Id lists are capped per call (MAX_ID_LIST): the group is made with the first chunk, the rest invited.
  const group = async (owner: bigint, members: readonly bigint[]): Promise<bigint> => {
    const CHUNK = 1000;
    const r = (await rest.call(owner, "/api/v1/group/add", { member_uids: members.slice(0, CHUNK), title: "bench" })) as { group: { gid: bigint } };
    const gid = r.group.gid;
    for (let i = CHUNK; i < members.length; i += CHUNK) {
      await rest.call(owner, "/api/v1/group_member/join", { gid, member_uids: members.slice(i, i + CHUNK) });
    }
    return gid;
  };
  return { name: `ibis-${store}`, store, server, headers, token, users, befriend, group, post: rest.call, stop, ...(db ? { pg: db.sql } : {}) };
}

/** Bench users' ids start here: above 2^53, so any `number` slip would show. */
const BENCH_ID_BASE = 1n << 60n;

/** Runs `n` async jobs, 16 at a time (the server has 2 cores; more only queues). */
async function pooled<T>(n: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) out[i] = await job(i);
  };
  await Promise.all(Array.from({ length: Math.min(16, n) }, worker));
  return out;
}

/** REST through the project's JSON codec (ids stay bigint both ways). */
function restClient(base: string, token: (user: bigint, device: string) => Promise<string>) {
  const post = async (path: string, body: unknown, auth?: string): Promise<unknown> => {
    const res = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-device-id": "bench-setup", "x-device-type": "desktop", ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
      body: stringifyJson(body),
    });
    const text = await res.text();
    const env = parseJson(text) as { code?: number; payload?: unknown };
    if (res.status !== 200 || env.code !== 0) throw new Error(`POST ${path}: ${res.status} ${text.slice(0, 200)}`);
    return env.payload;
  };
  return {
    async signup(account: string): Promise<bigint> {
      return ((await post("/api/v1/passport/signup", { account, pwd: "bench-password-1" })) as { uid: bigint }).uid;
    },
    async call(user: bigint, path: string, body: unknown): Promise<unknown> {
      return post(path, body, await token(user, "bench-setup"));
    },
  };
}

/** Starts the requested Ibis sides (`--ibis off|memory|postgres|both`), collecting skip notes. */
/** `env` may be a function: called once per side (e.g. a fresh fixed port for each clustered node). */
export async function ibisSides(
  want: string,
  fallback: IbisStore[],
  notes: string[],
  env: Record<string, string> | (() => Record<string, string>) = {},
  tree?: string,
): Promise<IbisHandle[]> {
  if (want === "off") return [];
  const stores: IbisStore[] = want === "both" ? ["memory", "postgres"] : want === "memory" || want === "postgres" ? [want] : fallback;
  const out: IbisHandle[] = [];
  for (const s of stores) {
    const r = await startIbisSide(s, typeof env === "function" ? env() : env, tree);
    if ("skipped" in r) {
      console.error(`NOTE: ${r.skipped}`);
      notes.push(r.skipped);
    } else out.push(r);
  }
  return out;
}

/** One of two compared nodes: its label, the variables it starts with on top of the run's, the checkout it runs from (undefined: this one). */
export type ComparedSide = readonly [label: string, env: Record<string, string>, tree?: string];

/** --compare-tree DIR: the other checkout's node first and this tree's second, so a paired ratio reads this tree / DIR. */
export const treeSides = (dir: string): ComparedSide[] => [[`tree ${dir}`, {}, dir], ["this tree", {}]];

/** The name a compared side's node goes by in a run's results. */
export const sideName = (store: IbisStore, label: string): string => `ibis-${store} ${label}`;

/** Starts each compared side's node of `store`, side by side, named by `sideName`. */
export async function comparedSides(store: IbisStore, sides: readonly ComparedSide[], notes: string[], env: () => Record<string, string>): Promise<IbisHandle[]> {
  const started = await Promise.all(
    sides.map(async ([label, extra, tree]) =>
      (await ibisSides(store, [], notes, () => ({ ...env(), ...extra }), tree)).map((h) => ({ ...h, name: sideName(store, label) })),
    ),
  );
  return started.flat();
}

/**
 * Does this node route C2C yet? One JSON message in a MSG_C2C frame between
 * two fresh friends: true when the peer receives a MSG_C2C within 3 s. False
 * means the transport's interim engine (SERVER_ACK without storing or routing).
 */
export async function routesC2c(h: IbisHandle): Promise<boolean> {
  const [a, b] = (await h.users(2)) as [bigint, bigint];
  await h.befriend([[a, b]]);
  const open = async (u: bigint, d: string) => {
    const ws = new WebSocket(`${h.server.ws}/ws`, { protocols: ["svc.v2"], headers: await h.headers(u, d) } as object);
    ws.binaryType = "nodebuffer";
    await new Promise((r, j) => ((ws.onopen = r), (ws.onerror = () => j(new Error(`probe socket of ${u} failed to open`)))));
    return ws;
  };
  const wb = await open(b, "probe-b");
  const wa = await open(a, "probe-a");
  try {
    const got = new Promise<boolean>((r) => {
      wb.addEventListener("message", (e) => (e.data as Uint8Array)[4] === FrameType.MsgC2C && r(true));
      setTimeout(() => r(false), 3000);
    });
    const json = `{"id":"C2C.${new IdGenerator(0).next()}.${Date.now()}.probe","type":"C2C","from":${a},"to":${b},"payload":{"text":"probe"},"msg_type":"text"}`;
    wa.send(encodeFrame(FrameType.MsgC2C, utf8(json)));
    return await got;
  } finally {
    wa.close();
    wb.close();
  }
}

/** Friend pairs' ids and tokens (decimal: generator params travel as JSON). */
export interface FriendPairs {
  users: [string, string][];
  tokens: [string, string][];
  /** The node does not route (interim engine): receivers acknowledge SERVER_ACKs themselves. */
  selfAck: boolean;
}

/** `n` friend pairs of real users, with tokens for both devices of each pair. */
export async function friendPairs(h: IbisHandle, n: number, selfAck: boolean): Promise<FriendPairs> {
  const ids = await h.users(2 * n);
  const pairs = Array.from({ length: n }, (_, i) => [ids[2 * i]!, ids[2 * i + 1]!] as const);
  await h.befriend(pairs);
  const tokens = await Promise.all(
    pairs.map(async ([a, b], i) => [await h.token(a, `c2c-a-${i}`), await h.token(b, `c2c-b-${i}`)] as [string, string]),
  );
  return { users: pairs.map(([a, b]) => [a.toString(), b.toString()]), tokens, selfAck };
}

