import type { SendOutcome, Session, SessionRegistry } from "../delivery/ports.ts";
import { Outbound } from "../model/message.ts";
import type { DeliverEntry } from "./bus.ts";
import { decodeBusDelivery } from "./message.ts";

/**
 * The receiving side of a `deliver` entry: decodes the message once, wraps it
 * in one Outbound (so the transport encodes once per sub-protocol for all
 * targets) and sends it to each target's sessions on this node. Returns what
 * happened per session; targets with no session here are simply absent (the
 * message is stored; they pull it on reconnect).
 */
export function deliverLocally(
  entry: DeliverEntry,
  sessions: SessionRegistry,
): { out: Outbound; serverId: bigint | undefined; seq?: bigint; sent: [Session, SendOutcome][] } {
  const { msg, serverId, seq } = decodeBusDelivery(entry.message);
  const out = new Outbound(msg);
  const sent: [Session, SendOutcome][] = [];
  for (const t of entry.targets) {
    if (t.deviceId !== undefined) {
      const s = sessions.session(t.userId, t.deviceId);
      if (s) sent.push([s, s.send(out)]);
    } else {
      for (const s of sessions.sessionsOf(t.userId)) sent.push([s, s.send(out)]);
    }
  }
  return { out, serverId, ...(seq !== undefined ? { seq } : {}), sent };
}
