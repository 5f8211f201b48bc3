/**
 * The bytes of an ImMessage on the bus: a one-line JSON header (every field
 * but the payload; ids as decimal strings) then "\n" then the payload's exact
 * JSON text. Encoded once per message on the sending node; the receiving node
 * splits at the newline and keeps the payload text as `payloadJson`, so the
 * transport writes it verbatim and the payload object is parsed only if some
 * code reads `payload`.
 */
import { heldPayloadUtf8, holdPayloadUtf8, type ImMessage } from "../model/message.ts";
import { LARGE_PAYLOAD_CHARS, parseJson, stringifyJson } from "../protocol/json.ts";

const NEWLINE = 0x0a;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Header {
  id: string;
  type: string;
  from: string | null;
  to: string;
  server_ts: number;
  msg_type?: string;
  action?: string;
  created_at?: string | number;
  e2ee?: ImMessage["e2ee"];
  in_reply_to?: string;
  /** The server id (decimal): the receiving node resolves the device's ack without a database read. */
  sid?: string;
  /** C2G: the message's timeline number (decimal), for the same purpose. */
  seq?: string;
}

export function encodeBusMessage(msg: ImMessage, serverId?: bigint, seq?: bigint): Uint8Array {
  const header: Header = {
    id: msg.id,
    type: msg.type,
    from: msg.from === null ? null : msg.from.toString(),
    to: msg.to.toString(),
    server_ts: msg.server_ts,
  };
  if (msg.msg_type !== undefined) header.msg_type = msg.msg_type;
  if (msg.action !== undefined) header.action = msg.action;
  if (msg.created_at !== undefined) header.created_at = msg.created_at;
  if (msg.e2ee !== undefined) header.e2ee = msg.e2ee;
  if (msg.in_reply_to !== undefined) header.in_reply_to = msg.in_reply_to;
  if (serverId !== undefined) header.sid = serverId.toString();
  if (seq !== undefined) header.seq = seq.toString();
  // JSON text never holds a raw newline, so the first one ends the header.
  const utf8 = heldPayloadUtf8(msg);
  if (!utf8) return encoder.encode(`${JSON.stringify(header)}\n${msg.payloadJson ?? stringifyJson(msg.payload)}`);
  // A payload held as bytes is copied once behind the header, not encoded again.
  const head = encoder.encode(`${JSON.stringify(header)}\n`);
  const out = new Uint8Array(head.length + utf8.length);
  out.set(head);
  out.set(utf8, head.length);
  return out;
}

export function decodeBusMessage(bytes: Uint8Array): ImMessage {
  return decodeBusDelivery(bytes).msg;
}

/** The message and, when the sender knew them, its server id and timeline number. */
export function decodeBusDelivery(bytes: Uint8Array): { msg: ImMessage; serverId: bigint | undefined; seq?: bigint } {
  const cut = bytes.indexOf(NEWLINE);
  if (cut < 0) throw new Error("bus message without header");
  const h = JSON.parse(decoder.decode(bytes.subarray(0, cut))) as Header;
  const payloadBytes = bytes.subarray(cut + 1);
  const large = payloadBytes.length >= LARGE_PAYLOAD_CHARS;
  const msg: ImMessage = {
    id: h.id,
    type: h.type,
    from: h.from === null ? null : BigInt(h.from),
    to: BigInt(h.to),
    payload: undefined,
    payloadJson: large ? undefined : decoder.decode(payloadBytes),
    server_ts: h.server_ts,
  };
  if (large) holdPayloadUtf8(msg, payloadBytes); // pushed as bytes, not encoded again; its text made only if asked for
  let parsed = false;
  let payload: unknown;
  Object.defineProperty(msg, "payload", {
    enumerable: true,
    get: () => {
      if (!parsed) {
        payload = parseJson(msg.payloadJson!);
        parsed = true;
      }
      return payload;
    },
    set: (v: unknown) => {
      payload = v;
      parsed = true;
      delete msg.payloadJson; // the text no longer describes the payload
      delete msg.payloadUtf8;
    },
  });
  if (h.msg_type !== undefined) msg.msg_type = h.msg_type;
  if (h.action !== undefined) msg.action = h.action;
  if (h.created_at !== undefined) msg.created_at = h.created_at;
  if (h.e2ee !== undefined) msg.e2ee = h.e2ee;
  if (h.in_reply_to !== undefined) msg.in_reply_to = h.in_reply_to;
  return { msg, serverId: h.sid === undefined ? undefined : BigInt(h.sid), ...(h.seq !== undefined ? { seq: BigInt(h.seq) } : {}) };
}
