/** The one presence suite, run on the memory and the Redis registry. */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { Presence } from "../../src/cluster/presence.ts";

export interface PresenceFixture {
  /** A registry for `nodeId`, its first heartbeat done. */
  node(nodeId: number): Promise<Presence>;
  /** Makes `nodeId` look dead (what its TTL running out does). */
  kill(nodeId: number): Promise<void>;
  dispose(): Promise<void>;
}

const U = 9_007_199_254_740_993n; // beyond 2^53

export function runPresenceSuite(name: string, make: () => Promise<PresenceFixture>): void {
  describe(`presence [${name}]`, () => {
    let fx: PresenceFixture;
    beforeEach(async () => {
      fx = await make();
    });
    afterEach(() => fx.dispose());

    test("a device added on one node is found from another, exact ids", async () => {
      const n1 = await fx.node(1);
      const n2 = await fx.node(2);
      expect(await n1.add(U, "phone")).toBeUndefined();
      const found = await n2.lookup([U]);
      expect([...found.entries()]).toEqual([[U, [{ userId: U, deviceId: "phone", nodeId: 1 }]]]);
    });

    test("the same device connecting on another live node reports the takeover", async () => {
      const n1 = await fx.node(1);
      const n2 = await fx.node(2);
      await n1.add(U, "phone");
      expect(await n2.add(U, "phone")).toBe(1);
      expect((await n1.lookup([U])).get(U)).toEqual([{ userId: U, deviceId: "phone", nodeId: 2 }]);
      expect(await n2.add(U, "phone")).toBeUndefined(); // same node again: not a cross-node takeover
    });

    test("remove by a node that lost the device leaves the new holder's entry", async () => {
      const n1 = await fx.node(1);
      const n2 = await fx.node(2);
      await n1.add(U, "phone");
      await n2.add(U, "phone");
      await n1.remove(U, "phone");
      expect((await n1.lookup([U])).get(U)).toEqual([{ userId: U, deviceId: "phone", nodeId: 2 }]);
      await n2.remove(U, "phone");
      expect((await n1.lookup([U])).size).toBe(0);
    });

    test("a batched lookup over many users and nodes", async () => {
      const nodes = [await fx.node(1), await fx.node(2), await fx.node(3)];
      const users = Array.from({ length: 1200 }, (_, i) => U + BigInt(i));
      for (const [i, u] of users.entries()) {
        if (i % 4 === 3) continue; // offline
        await nodes[i % 3]!.add(u, "a");
        if (i % 5 === 0) await nodes[(i + 1) % 3]!.add(u, "b");
      }
      const found = await nodes[0]!.lookup([...users, users[0]!, 1n]);
      expect(found.size).toBe(900);
      expect(found.has(users[3]!)).toBe(false);
      expect(found.has(1n)).toBe(false);
      const sorted = <T extends { deviceId: string }>(x: T[]) => [...x].sort((a, b) => a.deviceId.localeCompare(b.deviceId));
      expect(sorted(found.get(users[5]!)!)).toEqual([
        { userId: users[5]!, deviceId: "a", nodeId: 3 },
        { userId: users[5]!, deviceId: "b", nodeId: 1 },
      ]);
      expect(found.get(users[4]!)).toEqual([{ userId: users[4]!, deviceId: "a", nodeId: 2 }]);
    });

    test("a dead node's devices are not found, and taking one over is not a takeover", async () => {
      const n1 = await fx.node(1);
      const n2 = await fx.node(2);
      await n1.add(U, "phone");
      await n1.add(U + 1n, "tab");
      await n2.add(U, "desk");
      await fx.kill(1);
      expect((await n2.lookup([U, U + 1n])).get(U)).toEqual([{ userId: U, deviceId: "desk", nodeId: 2 }]);
      expect((await n2.lookup([U + 1n])).size).toBe(0);
      expect(await n2.add(U, "phone")).toBeUndefined();
    });

    test("clear removes this node's entries only", async () => {
      const n1 = await fx.node(1);
      const n2 = await fx.node(2);
      await n1.add(U, "a");
      await n1.add(U + 1n, "a");
      await n2.add(U, "b");
      await n1.clear();
      const found = await n2.lookup([U, U + 1n]);
      expect([...found.keys()]).toEqual([U]);
      expect(found.get(U)).toEqual([{ userId: U, deviceId: "b", nodeId: 2 }]);
    });

    test("nodes lists the live nodes only", async () => {
      const n1 = await fx.node(1);
      const n2 = await fx.node(2);
      const n3 = await fx.node(3);
      expect((await n1.nodes()).sort()).toEqual([1, 2, 3]);
      await fx.kill(2);
      await n3.clear();
      expect(await n1.nodes()).toEqual([1]);
      await n2.heartbeat(); // a killed node that beats again is back (memory: its epoch still holds)
      expect((await n1.nodes()).sort()).toEqual([1, 2]);
    });

    test("heartbeats keep entries alive", async () => {
      const n1 = await fx.node(1);
      await n1.add(U, "a");
      await n1.heartbeat();
      await n1.heartbeat();
      expect((await n1.lookup([U])).size).toBe(1);
    });
  });
}
