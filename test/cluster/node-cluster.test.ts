import { describe, expect, test } from "bun:test";
import { MemoryBus } from "../../src/bus/memory.ts";
import { RedisStreamsBus } from "../../src/bus/redis-streams.ts";
import { RedisPresence } from "../../src/cluster/presence-redis.ts";
import { until } from "../bus/collector.ts";
import { sharedRedisUrl, uniquePrefix, useRedis, useScratchRedis } from "../bus/redis-fixture.ts";
import { api, startTestNode } from "../support/node.ts";
import { RecordingEngine } from "../support/ws-engine.ts";
import { connect, createUser, rawHandshake, sessionOf } from "../support/ws.ts";
import { users } from "../../src/db/schema/index.ts";
import { eq } from "drizzle-orm";
import { storeKinds } from "../support/stores.ts";
import type { Conn } from "../../src/ws/conn.ts";

for (const kind of storeKinds()) {
  test(`[${kind}] without REDIS_URL: in-process bus and presence, /readyz 200, 503 once draining`, async () => {
    const node = await startTestNode(kind, { nodeId: undefined, shutdownGraceMs: 300 });
    try {
      expect(node.services.bus).toBeInstanceOf(MemoryBus);
      const ready = await api(node, "GET", "/readyz");
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ code: 0, payload: { status: "ready", node_id: node.services.nodeId } });
      const stopping = node.stop();
      expect(node.services.lifecycle.draining).toBe(true);
      const drained = await api(node, "GET", "/readyz");
      expect(drained.status).toBe(503);
      expect(drained.body).toMatchObject({ code: 503, payload: { status: "not_ready", reason: "draining" } });
      const ws = await api(node, "GET", "/ws");
      expect(ws.status).toBe(503);
      expect(ws.body).toMatchObject({ code: 503, payload: { title: "server restarting" } });
      await stopping;
    } finally {
      await node.stop();
    }
  }, 20_000);
}

test("a kick decided before this session opened leaves it open; one decided after closes it (4103)", async () => {
  const node = await startTestNode("pglite", { heartbeatInterval: 60_000 });
  try {
    const user = await createUser(node, "phone");
    const c = await connect(node, user);
    const s = (await sessionOf(node, user)) as Conn;
    expect(s.openedAt).toBeGreaterThan(0);
    const kick = (at: number) => ({ kind: "kick", userId: user.userId, deviceId: "phone", action: "logged_another_device", at }) as const;

    // A late kick (another node took the device before this connection opened) reaches the engine's handler.
    node.services.bus.send(node.services.nodeId, kick(s.openedAt - 1));
    await node.services.bus.flush(); // the local hand-off has run
    expect(s.closing).toBe(false);
    expect(node.ws.registry.session(user.userId, "phone")).toBe(s);

    node.services.bus.send(node.services.nodeId, kick(s.openedAt + 1));
    expect(await c.nextAction("logged_another_device")).toMatchObject({ type: "S2C" });
    expect((await c.closed).code).toBe(4103);
  } finally {
    await node.stop();
  }
}, 20_000);

describe("with REDIS_URL", () => {
  const r = useRedis();

  test("node ids are leased in Redis, the bus and presence are Redis-backed, shutdown cleans up", async () => {
    const { redis, prefix } = r;
    const opts = { redisUrl: sharedRedisUrl(), redisPrefix: prefix, nodeId: undefined };
    const a = await startTestNode("postgres", opts);
    const b = await startTestNode("postgres", opts);
    try {
      expect(a.services.nodeId).not.toBe(b.services.nodeId);
      expect(a.services.bus).toBeInstanceOf(RedisStreamsBus);
      expect(a.services.presence).toBeInstanceOf(RedisPresence);
      expect(await redis.exists(`${prefix}nodeid:${a.services.nodeId}`, `${prefix}nodeid:${b.services.nodeId}`)).toBe(2);
      expect((await api(a, "GET", "/readyz")).status).toBe(200);

      // a's bus reaches b's inbox, and b (its delivery engine's handler) consumes and acknowledges it.
      a.services.bus.send(b.services.nodeId, { kind: "ack", userId: 42n, deviceId: "phone", msgId: "m", type: "C2C" });
      await a.services.bus.flush();
      const inbox = `${prefix}node:${b.services.nodeId}`;
      expect(await redis.xlen(inbox)).toBe(1);
      await until(async () => {
        const [flat] = (await redis.call("XINFO", "GROUPS", inbox)) as unknown[][];
        const group = Object.fromEntries(Array.from({ length: flat!.length / 2 }, (_, i) => [flat![2 * i], flat![2 * i + 1]]));
        return group["last-delivered-id"] !== "0-0" && group.pending === 0;
      });
      await a.services.presence.add(42n, "phone");
      expect((await b.services.presence.lookup([42n])).get(42n)).toEqual([{ userId: 42n, deviceId: "phone", nodeId: a.services.nodeId }]);

      await a.stop();
      expect(await redis.exists(`${prefix}nodeid:${a.services.nodeId}`, `${prefix}alive:${a.services.nodeId}`)).toBe(0);
      expect(await redis.hlen(`${prefix}presence:42`)).toBe(0);
    } finally {
      await a.stop();
      await b.stop();
    }
  }, 20_000);

  test("shutdown closes every socket with 1012 and runs the engine's onClose for each, synchronously", async () => {
    const engine = new RecordingEngine();
    const node = await startTestNode("postgres", { redisUrl: sharedRedisUrl(), redisPrefix: r.prefix, nodeId: undefined, heartbeatInterval: 60_000 }, { engine });
    try {
      const user = await createUser(node, "d1");
      const c = await connect(node, user);
      await sessionOf(node, user);
      const stopping = node.stop(); // no grace: the sockets are closed before stop() first yields
      expect(engine.closed.map((s) => s.deviceId)).toEqual(["d1"]);
      await stopping;
      expect((await c.closed).code).toBe(1012);
    } finally {
      await node.stop();
    }
  }, 20_000);

  test("a node that cannot listen (port taken) undoes its cluster side: node id, liveness, presence", async () => {
    const { redis, prefix } = r;
    const opts = { redisUrl: sharedRedisUrl(), redisPrefix: prefix, nodeId: undefined };
    const a = await startTestNode("postgres", opts);
    try {
      const keys = async (pattern: string) => (await redis.keys(`${prefix}${pattern}`)).sort();
      const held = { ids: await keys("nodeid:*"), alive: await keys("alive:*") };
      expect(held.ids).toEqual([`${prefix}nodeid:${a.services.nodeId}`]);
      await expect(startTestNode("postgres", { ...opts, port: a.port })).rejects.toThrow();
      // The refused node had leased the next id and beaten once: both are gone, not left to expire.
      expect(await keys("nodeid:*")).toEqual(held.ids);
      expect(await keys("alive:*")).toEqual(held.alive);
      expect(await redis.hkeys(`${prefix}nodes`)).toEqual([String(a.services.nodeId)]);
      expect((await api(a, "GET", "/readyz")).status).toBe(200);
    } finally {
      await a.stop();
    }
  }, 20_000);

  test("an account deleted on another node is forgotten by this node's handshake memory at once", async () => {
    const opts = { redisUrl: sharedRedisUrl(), redisPrefix: r.prefix, nodeId: undefined, heartbeatInterval: 60_000 };
    const a = await startTestNode("postgres", opts);
    const b = await startTestNode("postgres", opts);
    try {
      const user = await createUser(b, "d3");
      const handshake = async () => {
        const { sock, head } = await rawHandshake(b, { Authorization: `Bearer ${user.token}`, "X-Device-ID": "d3", "Sec-WebSocket-Protocol": "svc-json" });
        sock.destroy();
        return head.split("\r\n")[0] ?? "";
      };
      expect(await handshake()).toContain("101"); // b now remembers the account as live
      await b.services.store.db.update(users).set({ deletedAt: Date.now() }).where(eq(users.id, user.userId));
      expect(await handshake()).toContain("101"); // remembered: the row is not read again
      // The deletion is swept on node a: its invalidation reaches b over the bus.
      a.social.facts.invalidate({ kind: "user", userId: user.userId });
      await until(async () => (await handshake()).includes("401"));
    } finally {
      await a.stop();
      await b.stop();
    }
  }, 20_000);

  test("shutdown removes the presence entries of the node's devices", async () => {
    const { redis, prefix } = r;
    const node = await startTestNode("postgres", { redisUrl: sharedRedisUrl(), redisPrefix: prefix, nodeId: undefined, heartbeatInterval: 60_000 });
    try {
      const user = await createUser(node, "d2");
      const c = await connect(node, user);
      const key = `${prefix}presence:${user.userId}`;
      await until(async () => (await redis.hget(key, "d2")) !== null);
      await node.stop();
      expect(await redis.hget(key, "d2")).toBeNull();
      expect(await redis.exists(`${prefix}alive:${node.services.nodeId}`)).toBe(0);
      expect((await c.closed).code).toBe(1012);
    } finally {
      await node.stop();
    }
  }, 20_000);
});

describe("Redis down (private redis-server)", () => {
  const sr = useScratchRedis();

  test("/readyz answers 503 while Redis is unreachable and 200 once it is back; /health stays 200", async () => {
    const node = await startTestNode("pglite", { redisUrl: sr.server.url, redisPrefix: uniquePrefix() });
    try {
      expect((await api(node, "GET", "/readyz")).status).toBe(200);
      await sr.server.down();
      await until(async () => (await api(node, "GET", "/readyz")).status === 503);
      const r = await api(node, "GET", "/readyz");
      expect(r.body).toMatchObject({ payload: { reason: "redis unreachable" } });
      expect((await api(node, "GET", "/health")).status).toBe(200);
      await sr.server.up();
      await until(async () => (await api(node, "GET", "/readyz")).status === 200);
    } finally {
      await node.stop();
    }
  }, 20_000);
});
