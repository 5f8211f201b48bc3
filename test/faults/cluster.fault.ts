/**
 * The fault suite (docs/reliability.md): two Ibis processes on a private
 * PostgreSQL and a private Redis, SDK clients sending C2C and C2G with their
 * own books. Each fault runs under load, then every client pulls, and the
 * suite prints `acked N, lost 0, duplicated K`; any loss fails it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { IbisConnection } from "../../src/client/index.ts";
import { TcpRelay, rest, signup, startIbisProcess, type Account, type IbisProcess } from "../cluster/processes.ts";
import { PrivatePostgres, PrivateRedis } from "../support/private-services.ts";
import { Ledger, LedgerClient, startLoad, type Device } from "./ledger.ts";

const USERS = 6;
const RATE = 20; // messages per second per client
const STORM = Number(process.env.IBIS_FAULT_STORM ?? 2000);

let pg: PrivatePostgres;
let redis: PrivateRedis;
let relay: TcpRelay;
let a: IbisProcess;
let b: IbisProcess;
let gid: bigint;
const clients: LedgerClient[] = [];
// Errors only: the faults make warnings by design, but an error (a 500's cause above all) must reach the CI log.
const extra = { IBIS_ALLOW_STRANGERS: "1", IBIS_PRESENCE_TTL_MS: "6000", IBIS_LOG_LEVEL: "error" };

const startB = (port?: number) =>
  startIbisProcess({ databaseUrl: pg.url, redisUrl: redis.url, prefix: "faults:", extra, ...(port ? { port } : {}) });

beforeAll(async () => {
  [pg, redis] = await Promise.all([PrivatePostgres.start(), PrivateRedis.start()]);
  relay = await TcpRelay.start(redis.url); // node A reaches Redis through it: the partition fault cuts it
  a = await startIbisProcess({ databaseUrl: pg.url, redisUrl: relay.url, prefix: "faults:", extra });
  b = await startB();
  const accounts: Account[] = [];
  for (let i = 0; i < USERS; i++) accounts.push(await signup(a.url, `fault-${i}-${Date.now()}`));
  const owner = accounts[0]!;
  const g = await rest(a.url, "POST", "/api/v1/group/add", {
    token: await owner.token("signup"),
    body: { title: "faults", member_uids: accounts.slice(1).map((x) => x.userId) },
  });
  gid = BigInt(g.body.payload.group.gid);
  for (const [i, acc] of accounts.entries()) {
    const me: Device = { userId: acc.userId, deviceId: "d", token: await acc.token("d") };
    clients.push(await new LedgerClient(new Ledger(), me, (i % 2 ? b : a).url).open());
  }
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await Promise.allSettled([a?.stop(), b?.stop()]);
  await relay?.cut();
  await Promise.allSettled([redis?.dispose(), pg?.dispose()]);
}, 60_000);

async function until(cond: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await Bun.sleep(50)) if (cond()) return true;
  return cond();
}

const open = (c: { conn: IbisConnection }) => c.conn.readyState === WebSocket.OPEN;

/** Load before, during and after `fault`; then everyone pulls; prints and returns the books. */
async function underLoad(name: string, fault: () => Promise<void>): Promise<ReturnType<Ledger["report"]>> {
  const ledger = new Ledger();
  for (const c of clients) c.ledger = ledger;
  const devices = clients.map((c) => c.me);
  let n = 0;
  const load = startLoad(clients, (from) => {
    n++;
    if (n % 2) return { type: "C2G", to: gid, recipients: devices.filter((d) => d.userId !== from.me.userId) };
    const to = clients[(clients.indexOf(from) + 1 + (n % (clients.length - 1))) % clients.length]!.me;
    return { type: "C2C", to: to.userId, recipients: [to] };
  }, RATE);
  await Bun.sleep(1_000);
  await fault();
  const back = Date.now();
  expect(await until(() => clients.every(open), 60_000)).toBe(true);
  const before = ledger.acked.size;
  expect(await until(() => ledger.acked.size > before + 20, 30_000)).toBe(true); // taking messages again
  const recoveredMs = Date.now() - back;
  await Bun.sleep(1_000);
  load.stop();
  await Bun.sleep(2_000); // answers and pushes in flight
  // Any node serves the pull: retry while the one asked is still recovering.
  for (const c of clients) {
    for (let i = 0; ; i++) {
      try {
        await c.pull(a.url);
        break;
      } catch (e) {
        if (i > 40) throw e;
        await Bun.sleep(250);
      }
    }
  }
  const rep = ledger.report();
  console.log(`${name}: acked ${rep.acked}, lost ${rep.lost}, duplicated ${rep.duplicated} (refused ${rep.refused}; sockets open and acks flowing ${recoveredMs} ms after the fault ended)`);
  if (rep.lost) console.log("  missing:", ledger.missing().slice(0, 10));
  return rep;
}

describe("faults under C2C and C2G load (two nodes, private PostgreSQL and Redis)", () => {
  test("kill -9 a node, restart it", async () => {
    const rep = await underLoad("kill -9 node", async () => {
      b.proc.kill("SIGKILL");
      await b.proc.exited;
      b = await startB(b.port);
    });
    expect(rep.acked).toBeGreaterThan(0);
    expect(rep.lost).toBe(0);
  }, 180_000);

  test("restart PostgreSQL", async () => {
    const rep = await underLoad("restart PostgreSQL", async () => {
      await pg.stop();
      await Bun.sleep(2_000);
      await pg.resume();
    });
    expect(rep.lost).toBe(0);
  }, 180_000);

  test("restart Redis (empty again)", async () => {
    const rep = await underLoad("restart Redis", async () => {
      await redis.stop();
      await Bun.sleep(1_000);
      await redis.resume();
    });
    expect(rep.lost).toBe(0);
  }, 180_000);

  test("partition one node from Redis", async () => {
    const rep = await underLoad("partition node from Redis", async () => {
      await relay.cut();
      await Bun.sleep(3_000);
      await relay.restore();
    });
    expect(rep.lost).toBe(0);
  }, 180_000);

  test(`reconnect storm: ${STORM} clients reconnect at once to a restarted node`, async () => {
    // Idle devices of a few accounts (one login per device registers it), all on node B.
    const owners: Account[] = [];
    for (let i = 0; i < Math.ceil(STORM / 100); i++) owners.push(await signup(a.url, `storm-${i}-${Date.now()}`));
    const idle: IbisConnection[] = [];
    for (let i = 0; i < STORM; i += 50) {
      const batch = Array.from({ length: Math.min(50, STORM - i) }, async (_, j) => {
        const k = i + j;
        const owner = owners[k % owners.length]!;
        const did = `storm-${k}`;
        const token = await owner.token(did);
        return IbisConnection.open({ url: b.url, token, deviceId: did, reconnect: true, onIncoming: () => {} });
      });
      idle.push(...(await Promise.all(batch)));
    }
    let reopened = 0;
    const rep = await underLoad(`reconnect storm (${STORM})`, async () => {
      b.proc.kill("SIGKILL");
      await b.proc.exited;
      b = await startB(b.port);
      const t0 = Date.now();
      expect(await until(() => idle.every((c) => c.readyState === WebSocket.OPEN), 90_000)).toBe(true);
      reopened = Date.now() - t0;
    });
    console.log(`  ${STORM} idle clients back on the restarted node within ${reopened} ms of its start`);
    expect(rep.lost).toBe(0);
    await Promise.allSettled(idle.map((c) => c.close()));
  }, 300_000);
});
