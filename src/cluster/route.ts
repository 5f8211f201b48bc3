import type { BusTarget } from "../bus/bus.ts";
import type { DeviceAddress } from "../delivery/ports.ts";
import type { PresenceEntry } from "./presence.ts";

/**
 * Turns a presence lookup into bus targets grouped by node: one target per
 * (user, node) naming no device (the receiving node pushes to all of that
 * user's local sessions), except for the user of `except`, whose other
 * devices are named one by one. The caller sends one deliver entry per node
 * (and hands its own node's share to local sessions directly).
 */
export function targetsByNode(found: ReadonlyMap<bigint, readonly PresenceEntry[]>, except?: DeviceAddress): Map<number, BusTarget[]> {
  const out = new Map<number, BusTarget[]>();
  const add = (node: number, t: BusTarget) => {
    const list = out.get(node);
    if (list) list.push(t);
    else out.set(node, [t]);
  };
  for (const [userId, entries] of found) {
    if (except && userId === except.userId) {
      for (const e of entries) if (e.deviceId !== except.deviceId) add(e.nodeId, { userId, deviceId: e.deviceId });
      continue;
    }
    const nodes = new Set<number>();
    for (const e of entries) if (!nodes.has(e.nodeId)) nodes.add(e.nodeId), add(e.nodeId, { userId });
  }
  return out;
}
