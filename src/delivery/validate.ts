/**
 * Validation of the §2.8 envelope at the edge (pure). Accepts what a decoder
 * produced (JSON object, or protobuf decoded to the same field names) and
 * returns the message as it flows through the server, with `payloadJson` set
 * once here: the stored text, never re-encoded per delivery.
 */
import { z } from "zod";
import { toId } from "../ids/tsid.ts";
import { payloadSourceOf, stringifyJson } from "../protocol/json.ts";
import { holdPayloadUtf8 } from "../model/message.ts";
import { messageIdType } from "./msg-id.ts";
import type { ChatType, E2eeMeta, ImMessage } from "./ports.ts";

export type Validated =
  | { readonly ok: true; readonly msg: ImMessage & { type: Exclude<ChatType, "S2C"> } }
  | { readonly ok: false; readonly reason: string; /** The message id when readable. */ readonly inReplyTo?: string };

// Leniency: numbers may arrive as numeric strings (older clients) or bigint (long literals).
const num = z.union([z.number().finite(), z.bigint(), z.string().regex(/^-?\d+(\.\d+)?$/)]);
const int = z.union([z.number().int(), z.bigint(), z.string().regex(/^-?\d+$/)]);
const str = z.string();
const id = z.unknown().refine((v) => toId(v) !== undefined, "must be a 64-bit id");
const bool = z.union([z.boolean(), z.literal(0), z.literal(1)]);
const any = z.record(z.string(), z.unknown());
const image = z.looseObject({ uri: str.min(1), size: num, width: num, height: num });

/** Required payload fields per msg_type (§2.8 table); extra fields are kept. */
export const PAYLOADS: Record<string, z.ZodType> = {
  text: z.union([z.looseObject({ text: str }), z.looseObject({ content: str })]),
  textStream: z.looseObject({ text: str, index: int, is_end: bool, stream_id: z.union([str.min(1), int]) }),
  image,
  imageMulti: z.looseObject({ images: z.array(image).min(1), total: int }),
  file: z.looseObject({ uri: str.min(1), name: str, size: num, mime_type: str }),
  location: z.looseObject({ latitude: num, longitude: num, title: str, address: str }),
  voice: z.looseObject({ uri: str.min(1), duration_ms: num, size: num }),
  video: z.looseObject({ uri: str.min(1), duration_ms: num, size: num, width: num, height: num }),
  system: any,
  quote: z.looseObject({ quote_msg_id: str.min(1), quote_text: str, text: str }),
  revoked: any,
  visitCard: z.looseObject({ uid: id, title: str, avatar: str }),
  webrtcAudio: z.looseObject({ call_type: z.union([str, int]), sdp: str }),
  webrtcVideo: z.looseObject({ call_type: z.union([str, int]), sdp: str }),
  custom: z.looseObject({ custom_type: z.union([str.min(1), int]) }),
  unsupported: any,
};

/** §2.8 bot addressing: a C2S payload carries text and an integer topic_id. */
const C2S_PAYLOAD = z.looseObject({ text: str, topic_id: int });

/*
 * Fast acceptance of the common payloads without zod (a zod parse is the
 * larger part of validating a short message). Each predicate may only say yes
 * where its schema above says yes; anything it does not recognise goes to zod,
 * which then accepts or words the error, so answers never change.
 * test/delivery/validate.test.ts checks every predicate against its schema.
 */
type Obj = Record<string, unknown>;
const isStr = (v: unknown): v is string => typeof v === "string";
const isUri = (v: unknown) => typeof v === "string" && v.length > 0;
const isNum = (v: unknown) => (typeof v === "number" && Number.isFinite(v)) || typeof v === "bigint";
const isInt = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v)) || typeof v === "bigint";
const isPlain = (p: Obj) => {
  const proto = Object.getPrototypeOf(p);
  return proto === Object.prototype || proto === null;
};
const isImage = (p: Obj) => isUri(p.uri) && isNum(p.size) && isNum(p.width) && isNum(p.height);

export const FAST_PAYLOADS: Readonly<Record<string, (p: Obj) => boolean>> = {
  text: (p) => isStr(p.text) || isStr(p.content),
  image: isImage,
  file: (p) => isUri(p.uri) && isStr(p.name) && isNum(p.size) && isStr(p.mime_type),
  voice: (p) => isUri(p.uri) && isNum(p.duration_ms) && isNum(p.size),
  video: (p) => isUri(p.uri) && isNum(p.duration_ms) && isNum(p.size) && isNum(p.width) && isNum(p.height),
  location: (p) => isNum(p.latitude) && isNum(p.longitude) && isStr(p.title) && isStr(p.address),
  quote: (p) => isUri(p.quote_msg_id) && isStr(p.quote_text) && isStr(p.text),
  system: isPlain,
  revoked: isPlain,
  unsupported: isPlain,
};
export const fastC2sPayload = (p: Obj): boolean => isStr(p.text) && isInt(p.topic_id);

/** The payload's first schema issue, or undefined when it is valid (fast predicate first). */
function payloadIssue(msgType: string, shape: z.ZodType, payload: Obj, c2s: boolean): string | undefined {
  const fast = Object.hasOwn(FAST_PAYLOADS, msgType) ? FAST_PAYLOADS[msgType] : undefined;
  if (!fast?.(payload)) {
    const p = shape.safeParse(payload);
    if (!p.success) return firstIssue(p.error, "payload");
  }
  if (c2s && !fastC2sPayload(payload)) {
    const c = C2S_PAYLOAD.safeParse(payload);
    if (!c.success) return firstIssue(c.error, "payload");
  }
  return undefined;
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const b64 = str.min(1).regex(BASE64, "must be Base64");
const E2EE = z.object({
  e2ee: z.literal(true),
  e2ee_ver: z.literal(1),
  e2ee_suite: str.min(1),
  nonce: b64,
  keys: z
    .array(z.object({ did: str.min(1), kid: str.optional(), wrap_alg: str.min(1), ek: b64 }))
    .min(1),
});

const REPLY_TO = z.looseObject({ msg_id: str.min(1), from_id: id.optional() });

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Uint8Array);

/** absent, "", null or {e2ee:false} mean "not encrypted" (§2.8). */
function notEncrypted(v: unknown): boolean {
  return v === undefined || v === null || v === "" || (isObject(v) && v.e2ee === false);
}

function firstIssue(error: z.ZodError, where: string): string {
  const issue = error.issues[0]!;
  const path = [where, ...issue.path.map(String)].filter(Boolean).join(".");
  return `${path}: ${issue.message}`;
}

/**
 * Validates one uplink message from `userId`. Failures carry the reason text
 * for S2C invalid_message and the id to answer in in_reply_to.
 */
export function validateUplink(raw: Record<string, unknown>, userId: bigint, serverTs: number): Validated {
  const idText = typeof raw.id === "string" ? raw.id : undefined;
  const bad = (reason: string): Validated => ({ ok: false, reason, ...(idText ? { inReplyTo: idText } : {}) });

  if (idText === undefined) return bad("id: required string <TYPE>.<tsid>.<timestamp>.<random>");
  const idType = messageIdType(idText);
  if (!idType) return bad("id: must be <TYPE>.<tsid>.<timestamp>.<random> (TYPE C2C/C2G/C2S/S2C, tsid uint64, random 1-32 of [0-9A-Za-z])");
  const type = raw.type;
  if (type === "S2C") return bad("type: clients may not send S2C");
  if (type !== "C2C" && type !== "C2G" && type !== "C2S") return bad("type: must be C2C, C2G or C2S");
  if (idType !== type) return bad(`id: type segment ${idType} does not match type ${type}`);

  const from = toId(raw.from);
  if (from === undefined) return bad("from: required 64-bit id");
  if (from !== userId) return bad("from: must be the signed-in user");
  const to = toId(raw.to);
  if (to === undefined) return bad("to: required 64-bit id");
  if (raw.action !== undefined && raw.action !== null && raw.action !== "") return bad("action: only S2C carries an action");
  if (typeof raw.msg_type !== "string" || raw.msg_type === "") return bad("msg_type: required");
  const msgType = raw.msg_type;
  const shape = Object.hasOwn(PAYLOADS, msgType) ? PAYLOADS[msgType] : undefined; // not "constructor" & co.
  if (!shape) return bad(`msg_type: unknown value ${msgType}`);
  const createdAt = raw.created_at;
  if (createdAt !== undefined && createdAt !== null && typeof createdAt !== "string" && typeof createdAt !== "number") {
    return bad("created_at: must be an RFC 3339 string or integer milliseconds");
  }
  if (raw.reply_to !== undefined && raw.reply_to !== null) {
    const r = REPLY_TO.safeParse(raw.reply_to);
    if (!r.success) return bad(firstIssue(r.error, "reply_to"));
  }

  let e2ee: E2eeMeta | undefined;
  const payload = raw.payload;
  const source = payloadSourceOf(raw);
  if (notEncrypted(raw.e2ee)) {
    if (!isObject(payload)) return bad("payload: must be an object (a Base64 string only when e2ee is set)");
    // A payload whose long strings are still bytes is checked on its stand-in (answers the same; no string made).
    const issue = payloadIssue(msgType, shape, (source?.standIn as Obj | undefined) ?? payload, type === "C2S");
    if (issue !== undefined) return bad(issue);
  } else {
    const e = E2EE.safeParse(raw.e2ee);
    if (!e.success) return bad(firstIssue(e.error, "e2ee"));
    if (typeof payload !== "string" || !BASE64.test(payload) || payload === "") {
      return bad("payload: must be a Base64 ciphertext string when e2ee is set");
    }
    e2ee = e.data as E2eeMeta;
  }

  // reply_to (quote map) travels inside a plain payload so it is stored with it; never in_reply_to.
  const body = raw.reply_to && isObject(payload) && payload.reply_to === undefined ? { ...payload, reply_to: raw.reply_to } : payload;
  const arrived = body === payload ? source : undefined;
  const msg: ImMessage & { type: Exclude<ChatType, "S2C"> } = {
    id: idText,
    type,
    from,
    to,
    payload: body,
    // A large payload is stored and pushed as it arrived (the decoder kept its text, its bytes or both); others are encoded once here.
    payloadJson: arrived ? arrived.text : stringifyJson(body),
    msg_type: msgType,
    server_ts: serverTs,
    ...(createdAt !== undefined && createdAt !== null ? { created_at: createdAt } : {}),
    ...(e2ee ? { e2ee } : {}),
  };
  if (arrived?.utf8) holdPayloadUtf8(msg, arrived.utf8); // set only on large messages: no spread per message
  return { ok: true, msg };
}
