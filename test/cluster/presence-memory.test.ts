import { expect, test } from "bun:test";
import { MemoryPresenceHub } from "../../src/cluster/presence.ts";
import { runPresenceSuite } from "./presence.case.ts";

const TTL = 30_000;

runPresenceSuite("memory", async () => {
  let t = 1_000_000;
  const hub = new MemoryPresenceHub(TTL, () => t);
  const nodes = new Map<number, ReturnType<MemoryPresenceHub["node"]>>();
  return {
    node: async (id) => {
      const p = hub.node(id);
      nodes.set(id, p);
      return p;
    },
    kill: async (id) => {
      // Everyone but `id` beats; then the clock passes the TTL.
      t += TTL - 1;
      for (const [n, p] of nodes) if (n !== id) await p.heartbeat();
      t += 2;
    },
    dispose: async () => {},
  };
});

test("memory presence: entries expire on the hub clock unless the node beats", async () => {
  let t = 0;
  const hub = new MemoryPresenceHub(TTL, () => t);
  const n1 = hub.node(1);
  await n1.add(5n, "a");
  t = TTL - 1;
  await n1.heartbeat();
  t = 2 * TTL - 2;
  expect((await n1.lookup([5n])).size).toBe(1);
  t = 2 * TTL;
  expect((await n1.lookup([5n])).size).toBe(0);
});
