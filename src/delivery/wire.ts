/** Conversions between stored rows and §2.8 messages. */
import { parseJson, stringifyJson } from "../protocol/json.ts";
import type { MessageRecord } from "./inbox.ts";
import { heldPayloadUtf8 } from "../model/message.ts";
import type { ImMessage } from "./ports.ts";
import type { StoredRow } from "./writer.ts";

/** `fromDevice`: the sending device of a client's message (a C2C's sending device is told by it, not by a mark). */
export function toRow(msg: ImMessage, serverId: bigint, fromDevice?: string): StoredRow {
  const utf8 = heldPayloadUtf8(msg);
  const row: StoredRow = {
    id: serverId,
    clientId: msg.id,
    chatType: msg.type,
    fromId: msg.from,
    toId: msg.to,
    msgType: msg.msg_type ?? "",
    action: msg.action ?? "",
    payload: utf8 ? "" : (msg.payloadJson ?? stringifyJson(msg.payload)),
    e2ee: msg.e2ee ? stringifyJson(msg.e2ee) : null,
    createdAt: msg.created_at === undefined ? null : stringifyJson(msg.created_at),
    serverTs: msg.server_ts,
    fromDevice: fromDevice ?? null,
  };
  if (utf8) {
    // Bound as bytes; the text only if a batch of several needs it (the message's own, decoded once if at all).
    row.payloadUtf8 = utf8;
    Object.defineProperty(row, "payload", { enumerable: true, get: () => msg.payloadJson });
  }
  return row;
}

/** A stored message as the §2.8 object REST answers carry (S2C `from` is ""). */
export function toWire(r: MessageRecord): Record<string, unknown> {
  return {
    id: r.clientId,
    type: r.chatType,
    from: r.fromId ?? "",
    to: r.toId,
    payload: parseJson(r.payload),
    ...(r.createdAt !== null ? { created_at: parseJson(r.createdAt) } : {}),
    server_ts: r.serverTs,
    ...(r.action ? { action: r.action } : {}),
    msg_type: r.msgType,
    ...(r.e2ee !== null ? { e2ee: parseJson(r.e2ee) } : {}),
  };
}
