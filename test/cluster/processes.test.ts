/**
 * Issue 6 "done when": real Ibis processes (`bun src/main.ts`), one port each,
 * one fresh PostgreSQL database and one Redis prefix, users and friends made
 * through REST, clients through the SDK.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type Redis from "ioredis";
import type { IbisConnection, SubProtocolName } from "../../src/client/index.ts";
import type { ImMessage } from "../../src/delivery/ports.ts";
import { newMessageId } from "../../src/client/index.ts";
import { until } from "../bus/collector.ts";
import { ScratchRedis, sharedRedisUrl, useRedis } from "../bus/redis-fixture.ts";
import { freshPostgresDatabase } from "../support/stores.ts";
import { c2c } from "../support/ws.ts";
import { befriend, offlineIds, openOn, TcpRelay, rest, signup, startIbisProcess, type Account, type IbisProcess } from "./processes.ts";

/**
 * Opens `did` on `node` and waits until its presence entry names that node:
 * the node registers a device just after the handshake, and a message or a
 * takeover racing that registration would not see the device there.
 */
async function openAt(redis: Redis, prefix: string, node: IbisProcess, who: Account, did: string, protocols?: SubProtocolName[]): Promise<IbisConnection> {
  const c = await openOn(node, who, did, protocols);
  await until(async () => (await redis.hget(`${prefix}presence:${who.userId}`, did))?.startsWith(`${node.nodeId}:`) === true);
  return c;
}

const closeAll = (cs: IbisConnection[]) => Promise.all(cs.map((c) => c.close()));

/** The ids of the §2.8 messages of `type` buffered on `c` (not taken by next*). */
const buffered = (c: IbisConnection, type: string) =>
  c.pending.flatMap((e) => (e.kind === "message" && e.msg.type === type ? [e.msg.id as string] : []));

describe("three Ibis processes on PostgreSQL and Redis", () => {
  const r = useRedis();
  let db: { url: string; drop(): Promise<void> };
  let n1: IbisProcess, n2: IbisProcess, n3: IbisProcess;
  let alice: Account, bob: Account, carol: Account;
  const open = (node: IbisProcess, who: Account, did: string, protocols?: SubProtocolName[]) => openAt(r.redis, r.prefix, node, who, did, protocols);

  beforeAll(async () => {
    db = await freshPostgresDatabase();
    const env = { databaseUrl: db.url, redisUrl: sharedRedisUrl(), prefix: r.prefix, extra: { IBIS_PRESENCE_TTL_MS: "3000" } };
    [n1, n2, n3] = await Promise.all([startIbisProcess(env), startIbisProcess(env), startIbisProcess(env)]);
    [alice, bob, carol] = await Promise.all([signup(n1.url, "alice"), signup(n2.url, "bob"), signup(n3.url, "carol")]);
    await befriend(n1.url, alice, bob);
    await befriend(n2.url, alice, carol);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([n1, n2, n3].map((n) => n?.stop()));
    await db?.drop();
  });

  test("the nodes have distinct node ids", () => {
    expect(new Set([n1.nodeId, n2.nodeId, n3.nodeId]).size).toBe(3);
  });

  test("C2C: A on node 1, B on node 2; B's ack is confirmed on node 2", async () => {
    const a = await open(n1, alice, "a-c2c");
    const b = await open(n2, bob, "b-c2c");
    const m = c2c(alice.userId, bob.userId, "across processes");
    a.send(m);
    expect(await a.nextMessage((x) => x.in_reply_to === m.id)).toMatchObject({ type: "C2C_SERVER_ACK" });
    expect(await b.nextMessage((x) => x.id === m.id && x.type === "C2C")).toMatchObject({ from: alice.userId, payload: { text: "across processes" } });
    b.ack({ type: "C2C", msgId: m.id }, "frame");
    expect(await b.nextAction("CLIENT_ACK_CONFIRM")).toMatchObject({ id: m.id });
    expect(await offlineIds(n3, bob, "b-c2c")).not.toContain(m.id); // the mark is visible from any node
    await closeAll([a, b]);
  });

  test("C2G fans out to members on three nodes", async () => {
    const made = await rest(n1.url, "POST", "/api/v1/group/add", {
      token: await alice.token("signup"),
      body: { title: "three nodes", member_uids: [bob.userId, carol.userId] },
    });
    expect(made.body.code).toBe(0);
    const gid = made.body.payload.group.group_id as bigint;
    const a = await open(n1, alice, "a-g");
    const b = await open(n2, bob, "b-g");
    const c = await open(n3, carol, "c-g", ["svc-json"]);
    const m: ImMessage = { id: newMessageId("C2G"), type: "C2G", from: alice.userId, to: gid, msg_type: "text", payload: { text: "hi all" }, server_ts: 0 };
    a.send(m);
    await a.nextMessage((x) => x.in_reply_to === m.id && x.type === "C2G_SERVER_ACK");
    for (const x of [b, c]) expect(await x.nextMessage((y) => y.id === m.id)).toMatchObject({ type: "C2G", to: gid, payload: { text: "hi all" } });
    await closeAll([a, b, c]);
  });

  test("an ack that lands on node 2 cancels the retry running on node 1", async () => {
    // B's device is connected to node 1, which runs its retries (C2C: a second attempt 3 s later).
    const a = await open(n3, alice, "a-r");
    const b = await open(n1, bob, "b-r");
    const acked = c2c(alice.userId, bob.userId, "acked elsewhere");
    const control = c2c(alice.userId, bob.userId, "not acked");
    for (const m of [acked, control]) {
      a.send(m);
      await b.nextMessage((x) => x.id === m.id && x.type === "C2C");
    }
    // The device acknowledges through REST on node 2 (offline_ack), not on its socket.
    const res = await rest(n2.url, "POST", "/api/v1/msg/offline_ack", { token: await bob.token("b-r"), body: { did: "b-r", msg_ids: [acked.id] } });
    expect(res.body.payload).toEqual({ success: [acked.id], failed: [] });
    // The control message, sent after, is retried; the acked one, due no later, is not.
    await b.nextMessage((x) => x.id === control.id && x.type === "C2C", 8_000);
    await Bun.sleep(300); // two retry ticks: the acked one would be here by now
    expect(buffered(b, "C2C")).not.toContain(acked.id);
    await closeAll([a, b]);
  }, 15_000);

  test("a device connecting on node 3 takes over its connection on node 2 (logged_another_device, 4103)", async () => {
    const old = await open(n2, bob, "b-t");
    const fresh = await open(n3, bob, "b-t");
    expect(await old.nextAction("logged_another_device")).toMatchObject({ type: "S2C" });
    expect((await old.closed).code).toBe(4103);
    // The new connection is the one delivered to.
    const a = await open(n1, alice, "a-t");
    const m = c2c(alice.userId, bob.userId, "to the new one");
    a.send(m);
    await fresh.nextMessage((x) => x.id === m.id && x.type === "C2C");
    await closeAll([a, fresh]);
  });

  test("a member who left a group on node 1 cannot send C2G through node 2 right after (caches invalidated across nodes)", async () => {
    const made = await rest(n1.url, "POST", "/api/v1/group/add", { token: await alice.token("signup"), body: { title: "leavers", member_uids: [bob.userId] } });
    expect(made.body.code).toBe(0);
    const gid = made.body.payload.group.group_id as bigint;
    const b = await open(n2, bob, "b-inv");
    const c2gFromBob = (text: string): ImMessage => ({ id: newMessageId("C2G"), type: "C2G", from: bob.userId, to: gid, msg_type: "text", payload: { text }, server_ts: 0 });
    const before = c2gFromBob("still a member");
    b.send(before);
    expect(await b.nextMessage((x) => x.in_reply_to === before.id)).toMatchObject({ type: "C2G_SERVER_ACK" }); // node 2 caches the members
    const left = await rest(n1.url, "POST", "/api/v1/group_member/leave", { token: await bob.token("signup"), body: { group_id: gid } });
    expect(left.body.code).toBe(0);
    // The notice reaches node 2 through node 1's inbox stream after the invalidation (same sender, in order).
    await b.nextAction("group_member_leave");
    const after = c2gFromBob("left already");
    b.send(after);
    expect(await b.nextMessage((x) => x.in_reply_to === after.id)).toMatchObject({ type: "S2C", action: "not_group_member" });
    await b.close();
  });

  test("SIGKILL of a node mid-traffic loses no acknowledged message", async () => {
    // A sends from node 3 (killed) to B's devices on node 2 and node 3.
    const a = await open(n3, alice, "a-k");
    const bLive = await open(n2, bob, "b-k2");
    const bKilled = await open(n3, bob, "b-k3");
    const sent: ImMessage[] = [];
    for (let i = 0; i < 200; i++) sent.push(c2c(alice.userId, bob.userId, `k${i}`));
    let i = 0;
    // Keep sending while the node dies (ws.send after the close is a no-op).
    const pump = setInterval(() => {
      for (let k = 0; k < 4 && i < sent.length; k++) a.send(sent[i++]!);
    }, 2);
    await until(() => buffered(a, "C2C_SERVER_ACK").length >= 20);
    n3.proc.kill("SIGKILL");
    await n3.proc.exited;
    clearInterval(pump);
    await a.closed.catch(() => {});
    const serverAcked = new Set(buffered(a, "C2C_SERVER_ACK"));
    expect(serverAcked.size).toBeGreaterThanOrEqual(20);

    // The device of the dead node reconnects elsewhere and pulls; so does the one that stayed up.
    const back = await open(n1, bob, "b-k3");
    for (const did of ["b-k3", "b-k2"]) {
      const pulled = new Set(await offlineIds(n1, bob, did));
      for (const id of serverAcked) expect(pulled.has(id)).toBe(true);
    }
    await closeAll([back, bLive, bKilled]);
  }, 20_000);
});

describe("two Ibis processes across a Redis restart (private redis-server)", () => {
  let sr: { server: ScratchRedis };
  let db: { url: string; drop(): Promise<void> };
  let n1: IbisProcess, n2: IbisProcess;
  let alice: Account, bob: Account;

  beforeAll(async () => {
    sr = { server: await ScratchRedis.start() };
    db = await freshPostgresDatabase();
    const env = { databaseUrl: db.url, redisUrl: sr.server.url, prefix: "ibis:", extra: { IBIS_PRESENCE_TTL_MS: "3000" } };
    [n1, n2] = await Promise.all([startIbisProcess(env), startIbisProcess(env)]);
    [alice, bob] = await Promise.all([signup(n1.url, "alice"), signup(n2.url, "bob")]);
    await befriend(n1.url, alice, bob);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([n1, n2].map((n) => n?.stop()));
    await db?.drop();
    await sr?.server.dispose();
  });

  test("not ready while Redis is down, local delivery goes on, and a device on the other node catches up after", async () => {
    const a = await openOn(n1, alice, "a1");
    const aLocal = await openOn(n1, alice, "a2");
    const b = await openOn(n2, bob, "b1");
    await sr.server.down();
    await until(async () => (await n1.ready()) === 503 && (await n2.ready()) === 503);

    const during = c2c(alice.userId, bob.userId, "while redis is down");
    a.send(during);
    expect(await a.nextMessage((x) => x.in_reply_to === during.id)).toMatchObject({ type: "C2C_SERVER_ACK" }); // stored
    await aLocal.nextMessage((x) => x.id === during.id && x.type === "C2C"); // same node: no Redis needed

    await sr.server.up();
    await until(async () => (await n1.ready()) === 200 && (await n2.ready()) === 200);
    // B's node lost Redis too: it tells its devices to pull, and the pull has the message.
    await b.nextAction("pull_offline_msg", 8_000);
    expect(await offlineIds(n2, bob, "b1")).toContain(during.id);

    // Routing works again once presence is back.
    const after = c2c(alice.userId, bob.userId, "after");
    await until(async () => {
      a.send({ ...after, id: newMessageId("C2C") });
      return (await b.nextMessage((x) => x.type === "C2C" && x.payload?.text === "after", 500).catch(() => undefined)) !== undefined;
    });
    await closeAll([a, aLocal, b]);
  }, 30_000);
});

describe("two Ibis processes, one of them cut off from Redis alone (relay)", () => {
  const r = useRedis();
  let relay: TcpRelay;
  let db: { url: string; drop(): Promise<void> };
  let n1: IbisProcess, n2: IbisProcess;
  let alice: Account, bob: Account;

  beforeAll(async () => {
    relay = await TcpRelay.start(sharedRedisUrl());
    db = await freshPostgresDatabase();
    const env = { databaseUrl: db.url, prefix: r.prefix, extra: { IBIS_PRESENCE_TTL_MS: "3000" } };
    [n1, n2] = await Promise.all([startIbisProcess({ ...env, redisUrl: relay.url }), startIbisProcess({ ...env, redisUrl: sharedRedisUrl() })]);
    [alice, bob] = await Promise.all([signup(n1.url, "alice"), signup(n2.url, "bob")]);
    await befriend(n1.url, alice, bob);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([n1, n2].map((n) => n?.stop()));
    await relay?.cut();
    await db?.drop();
  });

  test("what it stored meanwhile for a device on the other node is pulled there once its Redis is back", async () => {
    const a = await openAt(r.redis, r.prefix, n1, alice, "a1");
    const b = await openAt(r.redis, r.prefix, n2, bob, "b1");
    await relay.cut();
    await until(async () => (await n1.ready()) === 503);
    expect(await n2.ready()).toBe(200); // Redis is up for node 2: it has nothing to catch up on its own

    const during = c2c(alice.userId, bob.userId, "while node 1 is cut off");
    a.send(during);
    expect(await a.nextMessage((x) => x.in_reply_to === during.id)).toMatchObject({ type: "C2C_SERVER_ACK" }); // stored, not routed

    await relay.restore();
    await until(async () => (await n1.ready()) === 200);
    // Node 1 asks node 2 (a pull entry) to have bob's devices pull.
    await b.nextAction("pull_offline_msg", 8_000);
    expect(buffered(b, "C2C")).not.toContain(during.id);
    expect(await offlineIds(n2, bob, "b1")).toContain(during.id);
    await closeAll([a, b]);
  }, 30_000);
});
