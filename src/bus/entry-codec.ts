/**
 * A bus entry as the field/value list of one stream entry (XADD). Values that
 * carry bytes stay bytes (`m`: the message); everything else is short ASCII.
 *   k  kind: d (deliver), k (kick), a (ack), p (pull), v (invalidate), s (sessions), c (channel)      f  sending node id
 *   deliver:    t targets (JSON [[user, device?]…], ids as strings), m message bytes
 *   kick:       u user, d device, a action, at ms
 *   ack:        u user, d device, i message id, y chat type
 *   pull:       u users (JSON [user…], ids as strings); absent: every user
 *   invalidate: c change (p pair, g group, u user), then a/b users, g group or u user
 *   sessions:   a action, p payload JSON; optional u user, d session device, g below generation,
 *               t device type, c close code with r close reason
 *   channel:    ch channel id, a action; optional p payload JSON, u users (JSON), n subscriber count
 */
import type { ChatType } from "../model/message.ts";
import type { BusEntry, BusTarget, SessionsEntry, SocialChange } from "./bus.ts";

export type FieldValue = string | Buffer;

const asBuffer = (u8: Uint8Array): Buffer =>
  Buffer.isBuffer(u8) ? u8 : Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);

export function encodeEntry(entry: BusEntry, from: number): FieldValue[] {
  const f = String(from);
  switch (entry.kind) {
    case "deliver": {
      const t = JSON.stringify(
        entry.targets.map((x) => (x.deviceId === undefined ? [x.userId.toString()] : [x.userId.toString(), x.deviceId])),
      );
      return ["k", "d", "f", f, "t", t, "m", asBuffer(entry.message)];
    }
    case "kick":
      return ["k", "k", "f", f, "u", entry.userId.toString(), "d", entry.deviceId, "a", entry.action, "at", String(entry.at)];
    case "ack":
      return ["k", "a", "f", f, "u", entry.userId.toString(), "d", entry.deviceId, "i", entry.msgId, "y", entry.type];
    case "pull":
      return entry.userIds === undefined ? ["k", "p", "f", f] : ["k", "p", "f", f, "u", JSON.stringify(entry.userIds.map(String))];
    case "channel": {
      const out: FieldValue[] = ["k", "c", "f", f, "ch", entry.channelId.toString(), "a", entry.action];
      if (entry.payload !== undefined) out.push("p", entry.payload);
      if (entry.userIds !== undefined) out.push("u", JSON.stringify(entry.userIds.map(String)));
      if (entry.subscribers !== undefined) out.push("n", String(entry.subscribers));
      return out;
    }
    case "sessions": {
      const out: FieldValue[] = ["k", "s", "f", f, "a", entry.action, "p", entry.payload];
      if (entry.userId !== undefined) out.push("u", entry.userId.toString());
      if (entry.sessionDeviceId !== undefined) out.push("d", entry.sessionDeviceId);
      if (entry.belowGen !== undefined) out.push("g", String(entry.belowGen));
      if (entry.deviceType !== undefined) out.push("t", entry.deviceType);
      if (entry.close) out.push("c", String(entry.close.code), "r", entry.close.reason);
      return out;
    }
    case "invalidate": {
      const c = entry.change;
      switch (c.kind) {
        case "pair":
          return ["k", "v", "f", f, "c", "p", "a", c.a.toString(), "b", c.b.toString()];
        case "group":
          return ["k", "v", "f", f, "c", "g", "g", c.groupId.toString()];
        case "user":
          return ["k", "v", "f", f, "c", "u", "u", c.userId.toString()];
      }
    }
  }
}

function decodeChange(str: (k: string) => string | undefined): SocialChange | undefined {
  switch (str("c")) {
    case "p":
      return { kind: "pair", a: BigInt(str("a") ?? "x"), b: BigInt(str("b") ?? "x") };
    case "g":
      return { kind: "group", groupId: BigInt(str("g") ?? "x") };
    case "u":
      return { kind: "user", userId: BigInt(str("u") ?? "x") };
  }
  return undefined;
}

/** Reads the flat [field, value, …] list of a stream entry; undefined when it is not a bus entry. */
export function decodeEntry(fields: readonly Buffer[]): { entry: BusEntry; from: number } | undefined {
  const get = new Map<string, Buffer>();
  for (let i = 0; i + 1 < fields.length; i += 2) get.set(fields[i]!.toString("latin1"), fields[i + 1]!);
  const str = (k: string) => get.get(k)?.toString("utf8");
  const kind = str("k");
  const from = Number(str("f"));
  if (!Number.isInteger(from)) return undefined;
  try {
    if (kind === "d") {
      const message = get.get("m");
      const raw = JSON.parse(str("t") ?? "null") as [string, string?][];
      if (!message || !Array.isArray(raw)) return undefined;
      const targets: BusTarget[] = raw.map(([u, d]) => (d === undefined ? { userId: BigInt(u) } : { userId: BigInt(u), deviceId: d }));
      return { entry: { kind: "deliver", targets, message }, from };
    }
    if (kind === "p") {
      const raw = str("u");
      if (raw === undefined) return { entry: { kind: "pull" }, from };
      const list = JSON.parse(raw) as string[];
      if (!Array.isArray(list)) return undefined;
      return { entry: { kind: "pull", userIds: list.map((u) => BigInt(u)) }, from };
    }
    if (kind === "c") {
      const action = str("a");
      if (!action) return undefined;
      const users = str("u");
      const list = users === undefined ? undefined : (JSON.parse(users) as string[]);
      if (list !== undefined && !Array.isArray(list)) return undefined;
      const payload = str("p");
      const n = str("n");
      return {
        entry: {
          kind: "channel",
          channelId: BigInt(str("ch") ?? "x"),
          action,
          ...(payload !== undefined ? { payload } : {}),
          ...(list !== undefined ? { userIds: list.map((u) => BigInt(u)) } : {}),
          ...(n !== undefined && Number.isSafeInteger(Number(n)) ? { subscribers: Number(n) } : {}),
        },
        from,
      };
    }
    if (kind === "v") {
      const change = decodeChange(str);
      return change ? { entry: { kind: "invalidate", change }, from } : undefined;
    }
    if (kind === "s") return decodeSessions(str, from);
    const userId = BigInt(str("u") ?? "x");
    const deviceId = str("d");
    if (deviceId === undefined) return undefined;
    if (kind === "k") {
      const action = str("a");
      const at = Number(str("at"));
      if (!action || !Number.isFinite(at)) return undefined;
      return { entry: { kind: "kick", userId, deviceId, action, at }, from };
    }
    if (kind === "a") {
      const msgId = str("i");
      const type = str("y") as ChatType | undefined;
      if (!msgId || !type) return undefined;
      return { entry: { kind: "ack", userId, deviceId, msgId, type }, from };
    }
  } catch {
    // BigInt or JSON.parse refused a malformed entry
  }
  return undefined;
}

function decodeSessions(str: (k: string) => string | undefined, from: number): { entry: BusEntry; from: number } | undefined {
  const action = str("a");
  const payload = str("p");
  if (!action || payload === undefined) return undefined;
  const u = str("u");
  const d = str("d");
  const g = str("g");
  const t = str("t");
  const c = str("c");
  const entry: SessionsEntry = {
    kind: "sessions",
    action,
    payload,
    ...(u === undefined ? {} : { userId: BigInt(u) }),
    ...(d === undefined ? {} : { sessionDeviceId: d }),
    ...(g === undefined ? {} : { belowGen: Number(g) }),
    ...(t === undefined ? {} : { deviceType: t }),
    ...(c === undefined ? {} : { close: { code: Number(c), reason: str("r") ?? "" } }),
  };
  if (entry.belowGen !== undefined && !Number.isSafeInteger(entry.belowGen)) return undefined;
  if (entry.close && !Number.isInteger(entry.close.code)) return undefined;
  return { entry, from };
}
