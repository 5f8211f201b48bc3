/** Channel pushes across two nodes on one PostgreSQL database and one Redis: each node pushes to its own subscribers. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { IbisConnection } from "../../src/client/index.ts";
import { testConfig } from "../../src/config/index.ts";
import { users } from "../../src/db/schema/index.ts";
import { startIbis, type IbisNode } from "../../src/node.ts";
import { connect, dropPrefix, sharedRedisUrl, uniquePrefix } from "../bus/redis-fixture.ts";
import { api } from "../support/node.ts";
import { freshStore, type TestStore } from "../support/stores.ts";
import { payloadOf } from "./social.support.ts";

describe("channel pushes across two nodes [postgres + redis]", () => {
  let ts: TestStore;
  let a: IbisNode, b: IbisNode;
  const OWNER = 320000000000000001n;
  const ON_A = 320000000000000002n;
  const ON_B = 320000000000000003n;
  const prefix = uniquePrefix();
  const tokens = new Map<bigint, string>();
  beforeAll(async () => {
    ts = await freshStore("postgres");
    const config = testConfig({ redisUrl: sharedRedisUrl(), redisPrefix: prefix, nodeId: undefined, throttleOff: true, heartbeatInterval: 60_000 });
    a = await startIbis(config, { store: ts.store });
    b = await startIbis(config, { store: ts.store });
    await ts.store.db.insert(users).values([OWNER, ON_A, ON_B].map((id) => ({ id, account: `u${id}`, passwordHash: "x" })));
    for (const id of [OWNER, ON_A, ON_B]) tokens.set(id, (await a.services.tokens.pair(id, `d${id}`)).token);
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
    await ts.dispose();
    const redis = await connect();
    await dropPrefix(redis, prefix);
    redis.disconnect();
  });
  const call = async (node: IbisNode, who: bigint, method: string, path: string, body?: unknown) =>
    payloadOf(await api(node, method, path, { token: tokens.get(who)!, body }));
  const open = async (node: IbisNode, who: bigint) => {
    const conn = await IbisConnection.open({ url: node.url, token: tokens.get(who)!, deviceId: `d${who}`, protocols: ["svc-json"] });
    for (let i = 0; i < 500 && !(await node.services.presence.lookup([who])).get(who)?.length; i++) await Bun.sleep(5);
    return conn;
  };

  test("a publish on node A pushes to subscribers on A and on B; mark read on B reaches the reader's device on A", async () => {
    const c = await call(a, OWNER, "POST", "/api/v1/channel/create", { name: "x", visibility: 0, access_type: 0, join_policy: 0 });
    for (const u of [ON_A, ON_B]) await call(b, u, "POST", `/api/v1/channel/${c.channel_id}/subscribe`);
    const wa = await open(a, ON_A);
    const wb = await open(b, ON_B);
    const m1 = await call(a, OWNER, "POST", `/api/v1/channel/${c.channel_id}/message`, { content: "1", msg_type: "text" });
    await call(a, OWNER, "POST", `/api/v1/channel/${c.channel_id}/message`, { content: "2", msg_type: "text" });
    const last = async (conn: IbisConnection, want: number) => {
      for (;;) {
        const e = await conn.nextAction("channel_unread_count");
        expect(e.payload.channel_id).toBe(c.channel_id);
        if (e.payload.unread_count === want) return;
      }
    };
    await last(wa, 2);
    await last(wb, 2);
    // The reader's device is on A; its mark read is handled by B.
    await call(b, ON_A, "POST", `/api/v1/channel/${c.channel_id}/read`, { message_id: m1.message_id });
    await last(wa, 1);
    expect(payloadOf(await api(b, "GET", "/api/v1/channels/unread/summary", { token: tokens.get(ON_A)! })).total_unread).toBe(1);
    // Node B's own push went only to its own user.
    await b.channels.fanout.idle();
    expect(b.channels.fanout.counters.pushes).toBeGreaterThanOrEqual(2);
    await wa.close();
    await wb.close();
  });
});
