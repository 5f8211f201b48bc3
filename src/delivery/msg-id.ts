/**
 * §2.8 message ids: `<TYPE>.<tsid>.<ms>.<random>`. Clients choose the ids of
 * what they send; the server mints S2C ids (and its answers reuse the id they
 * answer). The tsid segment is what the svc.v2 frame ACK names.
 */
import type { ChatType } from "./ports.ts";

export const CHAT_TYPES: readonly ChatType[] = ["C2C", "C2G", "C2S", "S2C"];
const ID = /^(C2C|C2G|C2S|S2C)\.(\d{1,20})\.(\d{1,16})\.([0-9A-Za-z]{1,32})$/;
const U64_MAX = (1n << 64n) - 1n;

export interface MessageId {
  readonly type: ChatType;
  /** The tsid segment, decimal, as sent. */
  readonly tsid: string;
  readonly ms: string;
  readonly random: string;
}

/** Parses a §2.8 id; undefined when the shape or the uint64 range is wrong. */
export function parseMessageId(id: string): MessageId | undefined {
  const m = ID.exec(id);
  if (!m || BigInt(m[2]!) > U64_MAX) return undefined;
  return { type: m[1] as ChatType, tsid: m[2]!, ms: m[3]!, random: m[4]! };
}

/** The largest tsid segment, as 20 digits (a 20-digit segment above it is out of range). */
const U64_MAX_TEXT = U64_MAX.toString();

/**
 * The TYPE of a well-formed §2.8 id, or undefined: `parseMessageId`'s answer without its parts (the uplink path
 * needs only the type: no match array, no segment strings, no BigInt per message).
 */
export function messageIdType(id: string): ChatType | undefined {
  if (!ID.test(id)) return undefined;
  const end = id.indexOf(".", 4);
  if (end - 4 === 20 && id.slice(4, end) > U64_MAX_TEXT) return undefined; // same length: text order is numeric order
  // The regex admitted one of C2C, C2G, C2S and S2C: the first and third characters tell them apart.
  if (id.charCodeAt(0) === 0x53) return "S2C";
  const third = id.charCodeAt(2);
  return third === 0x43 ? "C2C" : third === 0x47 ? "C2G" : "C2S";
}

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A server-minted id; its tsid segment is the message's server id. */
export function mintMessageId(type: ChatType, serverId: bigint, ms: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  let random = "";
  for (const b of bytes) random += ALPHABET[b % 62];
  return `${type}.${serverId}.${ms}.${random}`;
}

/** The tsid segment of a well-formed id (second dot-separated part). */
export function tsidSegment(id: string): string | undefined {
  const a = id.indexOf(".");
  const b = a < 0 ? -1 : id.indexOf(".", a + 1);
  return b < 0 ? undefined : id.slice(a + 1, b);
}
