/**
 * What a client sent, told apart without more decoding than needed
 * (spec §4.5 uplink rules 2, 4, 5). The transport calls `decodeAck` before
 * its throttle (acks are exempt), then `decodeMessageBytes` /
 * `decodeMessageText` for business messages.
 */
import type { ClientAck } from "../model/message.ts";
import { ACK_DIRECTION_CHAT, ackDirectionOf, readU64 } from "./frame.ts";
import { keepPayloadText, LARGE_PAYLOAD_CHARS, MAX_JSON_DEPTH, memberSpan, parseJson, utf8Length, utf8Text } from "./json.ts";
import { decodeProtoMessage, isClientAckPayload, parseClientAckBytes, parseClientAckText } from "./message.ts";
import { decodeClientAckPb } from "./pb.ts";

const OPEN_BRACE = 0x7b;

/** Index of the first byte at or after `i` that is not JSON whitespace (the length when there is none). */
export function skipSpaceBytes(bytes: Uint8Array, i = 0): number {
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) break;
    i++;
  }
  return i;
}

/** Whether the first byte that is not JSON whitespace opens an object (then the bytes are read as JSON first). */
export const looksLikeJsonObject = (bytes: Uint8Array): boolean => bytes[skipSpaceBytes(bytes)] === OPEN_BRACE;

/** A JSON object (not an array, not null). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A business acknowledgement in binary form: the text `CLIENT_ACK,…` (svc.v2
 * MSG_C2S) or a protobuf ClientAck (svc.v2 MSG_C2S, svc-protobuf).
 * undefined: not an ack (a business message: throttle, then decode);
 * null: an ack, malformed (answer it as undecodable; it is still not throttled).
 */
export function decodeAck(bytes: Uint8Array): ClientAck | null | undefined {
  if (isClientAckPayload(bytes)) return parseClientAckBytes(bytes) ?? null;
  // A JSON object is never a protobuf ClientAck; skip the tag scan for it.
  return looksLikeJsonObject(bytes) ? undefined : decodeClientAckPb(bytes);
}

/** The text form on svc-json / text connections; same three answers as `decodeAck`. */
export function decodeAckText(text: string): ClientAck | null | undefined {
  if (!text.startsWith("CLIENT_ACK,")) return undefined;
  return parseClientAckText(text) ?? null;
}

/**
 * How a message's JSON text is parsed (`parseJson`'s contract). The server's
 * uplink passes `parseJsonSharing` (json-sharing.ts: a large payload's string
 * is not copied; large binary frames are not made text at all there,
 * `decodeUplinkBytes`); the client SDK decodes with the default and does not
 * bundle it.
 */
export type JsonParse = (text: string, maxDepth?: number) => unknown;

/**
 * Lenient decode of a binary business message (svc.v2 MSG payload,
 * svc-protobuf message): a UTF-8 JSON object first, else a protobuf Message.
 * undefined when neither (→ ERROR payload_decode_failed on svc.v2). The
 * server reads large ones from their bytes instead (json-sharing.ts
 * `decodeUplinkBytes`).
 */
export function decodeMessageBytes(bytes: Uint8Array, parse: JsonParse = parseJson): Record<string, unknown> | undefined {
  if (looksLikeJsonObject(bytes)) {
    try {
      const text = utf8Text(bytes);
      const value = parse(text, MAX_JSON_DEPTH);
      if (isObject(value)) return withPayloadText(value, text, bytes);
    } catch {
      // not JSON: fall through to protobuf, as §4.5 rule 5 orders
    }
  }
  return decodeProtoMessage(bytes);
}

// Where the id of a message refused before decoding is looked for: JSON senders write it first, protobuf as field 1.
const ID_HEAD = 4096;
const ID_IN_JSON = /"id"\s*:\s*"([^"\\]{1,200})"/;
const PB_ID_TAG = 0x0a; // field 1, length-delimited

/** The id of a JSON message text, read from its first few KiB without parsing it (undefined when not found). */
export function messageIdInText(text: string): string | undefined {
  return ID_IN_JSON.exec(text.length > ID_HEAD ? text.slice(0, ID_HEAD) : text)?.[1];
}

/**
 * The id of a binary business message (JSON or protobuf) without decoding the
 * rest: a refusal before decoding (size, throttle) can still name it.
 */
export function messageIdInBytes(bytes: Uint8Array): string | undefined {
  if (looksLikeJsonObject(bytes)) return messageIdInText(new TextDecoder().decode(bytes.subarray(0, ID_HEAD)));
  if (bytes[0] !== PB_ID_TAG) return undefined;
  let len = 0;
  let i = 1;
  for (let shift = 0; i < bytes.length && shift < 14; shift += 7) {
    const b = bytes[i++]!;
    len |= (b & 0x7f) << shift;
    if (b < 0x80) return len <= 200 && i + len <= bytes.length ? new TextDecoder().decode(bytes.subarray(i, i + len)) : undefined;
  }
  return undefined;
}

/** A text business message (svc-json / text): JSON object, else why not (S2C invalid_json / invalid_message). */
export function decodeMessageText(
  text: string,
  parse: JsonParse = parseJson,
): { ok: true; raw: Record<string, unknown> } | { ok: false; reason: "invalid_json" | "invalid_message" } {
  let value: unknown;
  try {
    value = parse(text, MAX_JSON_DEPTH);
  } catch {
    return { ok: false, reason: "invalid_json" };
  }
  return isObject(value) ? { ok: true, raw: withPayloadText(value, text) } : { ok: false, reason: "invalid_message" };
}

/**
 * A large message's payload text as it arrived (`keepPayloadText`), with its
 * bytes as a view of the frame when the message came as bytes; small ones
 * are not scanned. `text` is `bytes` decoded (strictly: valid UTF-8), so the
 * same length means all ASCII and offsets agree; otherwise the envelope
 * around the payload (short) is counted, never the payload.
 */
function withPayloadText(msg: Record<string, unknown>, text: string, bytes?: Uint8Array): Record<string, unknown> {
  if (text.length < LARGE_PAYLOAD_CHARS) return msg;
  const span = memberSpan(text, "payload");
  if (!span || !bytes) return keepPayloadText(msg, span?.text);
  const end = span.start + span.text.length;
  const ascii = bytes.length === text.length;
  const from = ascii ? span.start : utf8Length(text.slice(0, span.start));
  const to = ascii ? end : bytes.length - utf8Length(text.slice(end));
  return keepPayloadText(msg, span.text, bytes.subarray(from, to));
}

/**
 * svc.v2 frame ACK → client-ack: the uint64 is the acknowledged message's
 * tsid segment (decimal), the direction comes from flags bits 4–3 and the
 * device from the connection. undefined unless the payload is exactly 8 bytes.
 */
export function frameAckToClientAck(payload: Uint8Array, flags: number, did: string): ClientAck | undefined {
  const id = readU64(payload);
  if (id === undefined) return undefined;
  return { type: ACK_DIRECTION_CHAT[ackDirectionOf(flags)], msgId: id.toString(), did, tsidOnly: true };
}

/** The tsid segment of a message id `<TYPE>.<tsid>.<ms>.<random>` (what a frame ACK names). */
export function tsidSegment(msgId: string): string | undefined {
  const start = msgId.indexOf(".") + 1;
  if (start === 0) return undefined;
  const end = msgId.indexOf(".", start);
  const seg = end < 0 ? msgId.slice(start) : msgId.slice(start, end);
  return /^\d+$/.test(seg) ? seg : undefined;
}
