/**
 * The documented path of a cross-node message (docs/cluster.md), played with
 * the real bus and presence of two and three nodes, in process and on Redis:
 * what the delivery engine will do, minus storage and retry timers.
 */
import { describe, expect, test } from "bun:test";
import type Redis from "ioredis";
import type { Bus, BusEntry } from "../../src/bus/bus.ts";
import { deliverLocally } from "../../src/bus/local.ts";
import { MemoryBusHub } from "../../src/bus/memory.ts";
import { encodeBusMessage } from "../../src/bus/message.ts";
import { RedisStreamsBus } from "../../src/bus/redis-streams.ts";
import { MemoryPresenceHub, type Presence } from "../../src/cluster/presence.ts";
import { RedisPresence } from "../../src/cluster/presence-redis.ts";
import { targetsByNode } from "../../src/cluster/route.ts";
import type { Outbound, Session, SessionRegistry } from "../../src/delivery/ports.ts";
import { IdGenerator } from "../../src/ids/tsid.ts";
import { Collector } from "../bus/collector.ts";
import { quiet, useRedis } from "../bus/redis-fixture.ts";

interface Node {
  id: number;
  bus: Bus;
  presence: Presence;
  sessions: Map<string, { session: Session; got: Outbound[] }>;
  entries: Collector;
}

function registry(node: Node): SessionRegistry {
  const all = () => [...node.sessions.values()].map((s) => s.session);
  return { sessionsOf: (u) => all().filter((s) => s.userId === u), session: (u, d) => node.sessions.get(`${u}/${d}`)?.session };
}

/** A node whose bus handler does what the engine will: deliver locally, record kicks and acks. */
async function node(id: number, bus: Bus, presence: Presence): Promise<Node> {
  const n: Node = { id, bus, presence, sessions: new Map(), entries: new Collector() };
  await presence.heartbeat();
  await bus.start((entry: BusEntry, from) => {
    if (entry.kind === "deliver") deliverLocally(entry, registry(n));
    n.entries.handler(entry, from);
  });
  return n;
}

async function connectDevice(n: Node, userId: bigint, deviceId: string): Promise<number | undefined> {
  const got: Outbound[] = [];
  const session: Session = { userId, deviceId, connId: n.sessions.size + 1, deviceType: "web", openedAt: 0, send: (o) => (got.push(o), "sent"), close() {} };
  n.sessions.set(`${userId}/${deviceId}`, { session, got });
  return n.presence.add(userId, deviceId);
}

function play(name: string, make: () => Promise<Node[]>): void {
  test(`[${name}] C2G over three nodes: one entry per node; a REST ack forwarded to the device's node; takeover kicks the old node`, async () => {
    const [n1, n2, n3] = await make();
    const A = 1n, B = 2n, C = 3n, D = 4n;
    await connectDevice(n1!, A, "phone");
    await connectDevice(n2!, B, "phone");
    await connectDevice(n2!, C, "desk");
    await connectDevice(n3!, D, "tab");

    // n1 stores a C2G from A (its id minted on n1) and fans it out.
    const msgId = `C2G.${new IdGenerator(n1!.id).next()}.1.r`;
    const bytes = encodeBusMessage({ id: msgId, type: "C2G", from: A, to: 99n, payload: { text: "hi" }, msg_type: "text", server_ts: 1 });
    const found = await n1!.presence.lookup([A, B, C, D]);
    const routes = targetsByNode(found, { userId: A, deviceId: "phone" });
    expect([...routes.keys()].sort()).toEqual([n2!.id, n3!.id]);
    for (const [to, targets] of routes) n1!.bus.send(to, { kind: "deliver", targets, message: bytes });
    await n2!.entries.waitFor(1);
    await n3!.entries.waitFor(1);
    expect(n2!.entries.got).toHaveLength(1); // B and C share one entry
    const atB = n2!.sessions.get(`${B}/phone`)!.got;
    expect(atB).toHaveLength(1);
    expect(n2!.sessions.get(`${C}/desk`)!.got).toEqual(atB); // the same Outbound: one encode per sub-protocol
    expect(atB[0]!.msg.payloadJson).toBe('{"text":"hi"}');

    // B's phone acks through REST on n3: its retry runs on n2, the node holding its connection (presence says so).
    const at = (await n3!.presence.lookup([B])).get(B)!.find((e) => e.deviceId === "phone")!;
    expect(at.nodeId).toBe(n2!.id);
    n3!.bus.send(at.nodeId, { kind: "ack", userId: B, deviceId: "phone", msgId, type: "C2G" });
    await n2!.entries.waitFor(2);
    expect(n2!.entries.got[1]).toEqual({ entry: { kind: "ack", userId: B, deviceId: "phone", msgId, type: "C2G" }, from: n3!.id });

    // D's tablet reconnects on n1 while n3 still holds it: n3 is told to close it.
    const before = await connectDevice(n1!, D, "tab");
    expect(before).toBe(n3!.id);
    n1!.bus.send(before!, { kind: "kick", userId: D, deviceId: "tab", action: "logged_another_device", at: 5 });
    await n3!.entries.waitFor(2);
    expect(n3!.entries.got[1]!.entry).toMatchObject({ kind: "kick", userId: D, deviceId: "tab" });
    for (const n of [n1!, n2!, n3!]) await n.bus.close();
  });
}

play("memory", async () => {
  const buses = new MemoryBusHub();
  const presence = new MemoryPresenceHub(30_000);
  return Promise.all([11, 12, 13].map((id) => node(id, buses.bus(id, quiet), presence.node(id))));
});

describe("redis", () => {
  const r = useRedis();
  play("redis", async () => {
    const make = (redis: Redis, id: number) =>
      node(
        id,
        new RedisStreamsBus({ redis, nodeId: id, prefix: r.prefix, maxLen: 1000, bufferMax: 1000, log: quiet }),
        new RedisPresence({ redis, nodeId: id, prefix: r.prefix, ttlMs: 30_000 }),
      );
    return Promise.all([11, 12, 13].map((id) => make(r.redis, id)));
  });
});
