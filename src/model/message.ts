/**
 * The message model every layer shares: the codecs (src/protocol), the bus,
 * the delivery engine and the client SDK. Bottom floor: imports nothing, so
 * the SDK can be bundled for browsers without pulling in the server.
 */

/** Chat kinds (spec §1). */
export type ChatType = "C2C" | "C2G" | "C2S" | "S2C";

/** E2EE metadata (spec §2.8). */
export interface E2eeMeta {
  e2ee: true;
  e2ee_ver: number;
  e2ee_suite: string;
  nonce: string;
  keys: { did: string; kid?: string; wrap_alg: string; ek: string }[];
}

/**
 * One message in the §2.8 structure, as it flows through the server.
 * Ids are bigint; `from` is null for S2C (written "" on the wire).
 */
export interface ImMessage {
  /** `<TYPE>.<tsid>.<ms>.<random>`; minted by the server for S2C. */
  id: string;
  /** C2C, C2G, C2S, S2C, or an answer form: C2C_SERVER_ACK, …, CLIENT_ACK_CONFIRM. */
  type: string;
  from: bigint | null;
  to: bigint;
  /** Object for plain messages; Base64 ciphertext string when encrypted. */
  payload: unknown;
  /**
   * The payload's exact JSON text when already known (as stored, or as it
   * arrived). Encoders write it verbatim instead of stringifying `payload`,
   * so a stored message is never re-encoded per delivery.
   */
  payloadJson?: string;
  /**
   * The UTF-8 of `payloadJson`, when the server holds it as bytes already (a
   * large payload as it arrived: a view of the client's frame). The store and
   * the protobuf push copy it instead of encoding the text. Only ever set
   * together with the `payloadJson` it encodes, which may then be an
   * accessor that decodes these bytes when first read (`holdPayloadUtf8`).
   */
  payloadUtf8?: Uint8Array;
  msg_type?: string;
  action?: string;
  created_at?: string | number;
  server_ts: number;
  e2ee?: E2eeMeta;
  in_reply_to?: string;
}

/**
 * The UTF-8 of the message's payload text when the server holds it as bytes
 * (only ever beside that text, or beside `holdPayloadUtf8`'s accessor for it,
 * which this does not call).
 */
export function heldPayloadUtf8(msg: ImMessage): Uint8Array | undefined {
  const text = msg.payloadUtf8 && Object.getOwnPropertyDescriptor(msg, "payloadJson");
  return text && (text.get || text.value !== undefined) ? msg.payloadUtf8 : undefined;
}

/**
 * Holds a large payload as its UTF-8 bytes (a view of the frame it came in,
 * already checked to be valid UTF-8). Without a text for them yet,
 * `payloadJson` becomes an accessor that decodes the bytes when first read:
 * the store and the binary pushes take the bytes, so a 16 MiB payload
 * becomes a string only for a consumer that needs one (a JSON-text push, a
 * bot).
 */
export function holdPayloadUtf8(msg: ImMessage, utf8: Uint8Array): void {
  msg.payloadUtf8 = utf8;
  if (msg.payloadJson !== undefined) return;
  const settle = (value: string | undefined) =>
    Object.defineProperty(msg, "payloadJson", { value, writable: true, enumerable: true, configurable: true });
  Object.defineProperty(msg, "payloadJson", {
    enumerable: true,
    configurable: true,
    get: () => {
      const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(utf8); // once per message, if ever
      settle(text);
      return text;
    },
    set: settle,
  });
}

/**
 * A message on its way out. The transport encodes it at most once per
 * encoding and caches the bytes here, so a fan-out to N devices costs one
 * encode per sub-protocol, not N (a push with a payload of 1 MiB or more is
 * encoded into a buffer the node keeps instead: src/protocol/message.ts `largeFrame`).
 */
export class Outbound {
  /** Encoding cache, owned by the transport (keys: "json", "pb", "v2", …). */
  readonly encoded: Record<string, string | Uint8Array | undefined> = {};
  constructor(readonly msg: ImMessage) {}
}

/** A client acknowledgement, from any of its three forms (text, protobuf, svc.v2 frame ACK). */
export interface ClientAck {
  /** C2C, C2G, C2S or S2C: the direction of the acknowledged message. */
  readonly type: ChatType;
  /** The acknowledged message's id; a frame ACK gives only the tsid segment (decimal). */
  readonly msgId: string;
  /** Device id claimed by the ack; must be the connection's device. */
  readonly did: string;
  /** In the svc.v2 frame ACK form msgId is only the tsid segment. */
  readonly tsidOnly?: boolean;
}
