import { expect, test } from "bun:test";
import type { PresenceEntry } from "../../src/cluster/presence.ts";
import { targetsByNode } from "../../src/cluster/route.ts";

const e = (userId: bigint, deviceId: string, nodeId: number): PresenceEntry => ({ userId, deviceId, nodeId });
const found = (...entries: PresenceEntry[]) => {
  const m = new Map<bigint, PresenceEntry[]>();
  for (const x of entries) m.set(x.userId, [...(m.get(x.userId) ?? []), x]);
  return m;
};

test.each([
  ["nothing online", found(), undefined, {}],
  ["one user, two devices on one node: one target", found(e(1n, "a", 2), e(1n, "b", 2)), undefined, { 2: [{ userId: 1n }] }],
  ["one user on two nodes: one target per node", found(e(1n, "a", 2), e(1n, "b", 3)), undefined, { 2: [{ userId: 1n }], 3: [{ userId: 1n }] }],
  [
    "group over three nodes: users grouped per node",
    found(e(1n, "a", 1), e(2n, "a", 2), e(3n, "a", 2), e(4n, "x", 3)),
    undefined,
    { 1: [{ userId: 1n }], 2: [{ userId: 2n }, { userId: 3n }], 3: [{ userId: 4n }] },
  ],
  [
    "sender's other devices named one by one, the sending device left out",
    found(e(1n, "a", 1), e(1n, "b", 1), e(1n, "c", 2), e(2n, "a", 2)),
    { userId: 1n, deviceId: "a" },
    { 1: [{ userId: 1n, deviceId: "b" }], 2: [{ userId: 1n, deviceId: "c" }, { userId: 2n }] },
  ],
] as const)("%s", (_name, input, except, want) => {
  expect(Object.fromEntries(targetsByNode(input, except))).toEqual(want as never);
});
