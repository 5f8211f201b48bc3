import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { messageIdType, parseMessageId, tsidSegment } from "../../src/delivery/msg-id.ts";
import { FAST_PAYLOADS, fastC2sPayload, PAYLOADS, validateUplink } from "../../src/delivery/validate.ts";
import { toRow } from "../../src/delivery/wire.ts";
import { encodeBusMessage } from "../../src/bus/message.ts";
import { decodeUplinkBytes } from "../../src/protocol/json-sharing.ts";
import { LARGE_PAYLOAD_CHARS } from "../../src/protocol/json.ts";
import { encodeMessagePb } from "../../src/protocol/pb.ts";
import { decodeMessageBytes, decodeMessageText } from "../../src/protocol/uplink.ts";
import { E2EE } from "./harness.ts";

const ME = 300000000000000001n;
const base = (over: Record<string, unknown> = {}) => ({
  id: "C2C.123456789012345678.1763888400000.aB3",
  type: "C2C",
  from: ME,
  to: 300000000000000002n,
  msg_type: "text",
  payload: { text: "hi" },
  ...over,
});

describe("message id", () => {
  test.each([
    ["C2C.1.2.a", true],
    ["S2C.18446744073709551615.1763888400000.Zz09", true],
    ["C2C.18446744073709551616.1.a", false], // above uint64
    ["C2X.1.2.a", false],
    ["C2C.1.2.", false],
    ["C2C.1.2.a-b", false],
    [`C2C.1.2.${"a".repeat(33)}`, false],
    [`C2C.1.2.${"a".repeat(32)}`, true],
    ["C2C.-1.2.a", false],
    ["C2C.1.1.5.a", false],
    ["C2C.1.x.a", false], // timestamp not decimal
    ["C2C.1.-2.a", false],
    ["C2C.1.2.a.b", false],
    ["C2G.1.2.a", true],
    ["C2S.00000000000000000001.2.a", true], // 20 digits with leading zeros: in range
    ["C2S.99999999999999999999.2.a", false],
  ])("%s → %p", (id, good) => {
    expect(parseMessageId(id) !== undefined).toBe(good);
    // The uplink's check: the same verdict, and the type parseMessageId reads.
    expect(messageIdType(id)).toBe(parseMessageId(id)?.type);
  });
  test("messageIdType agrees with parseMessageId on generated ids", () => {
    const segment = fc.oneof(fc.bigInt({ min: 0n, max: (1n << 64n) + 5n }).map(String), fc.stringMatching(/^[0-9]{1,21}$/));
    const id = fc.tuple(fc.constantFrom("C2C", "C2G", "C2S", "S2C", "S2S", "c2c"), segment, fc.stringMatching(/^[0-9]{1,17}$/), fc.stringMatching(/^[0-9A-Za-z-]{0,33}$/));
    fc.assert(fc.property(id, ([type, tsid, ms, random]) => {
      const text = `${type}.${tsid}.${ms}.${random}`;
      expect(messageIdType(text)).toBe(parseMessageId(text)?.type);
    }), { numRuns: 2000 });
  });
  test("tsid segment", () => {
    expect(tsidSegment("C2C.77.2.a")).toBe("77");
    expect(tsidSegment("nope")).toBeUndefined();
  });
});

describe("validateUplink", () => {
  const good: [string, Record<string, unknown>][] = [
    ["text", {}],
    ["text as content", { payload: { content: "hi" } }],
    ["from as decimal string", { from: ME.toString() }],
    ["to as safe number", { to: 42 }],
    ["empty action", { action: "" }],
    ["e2ee empty string", { e2ee: "" }],
    ["e2ee false", { e2ee: { e2ee: false } }],
    ["created_at RFC 3339", { created_at: "2026-11-23T09:00:00.123456Z" }],
    ["created_at ms", { created_at: 1763888400000 }],
    ["textStream", { msg_type: "textStream", payload: { text: "a", index: 0, is_end: 1, stream_id: "s" } }],
    ["image with numeric strings", { msg_type: "image", payload: { uri: "u", size: "10", width: 1, height: 2 } }],
    ["imageMulti", { msg_type: "imageMulti", payload: { images: [{ uri: "u", size: 1, width: 1, height: 1 }], total: 1 } }],
    ["file", { msg_type: "file", payload: { uri: "u", name: "n", size: 1, mime_type: "text/plain" } }],
    ["location", { msg_type: "location", payload: { latitude: 1.5, longitude: -2, title: "", address: "x" } }],
    ["voice", { msg_type: "voice", payload: { uri: "u", duration_ms: 10, size: 1 } }],
    ["video", { msg_type: "video", payload: { uri: "u", duration_ms: 10, size: 1, width: 1, height: 1 } }],
    ["system", { msg_type: "system", payload: {} }],
    ["quote", { msg_type: "quote", payload: { quote_msg_id: "C2C.1.2.a", quote_text: "q", text: "t" } }],
    ["revoked", { msg_type: "revoked", payload: {} }],
    ["visitCard with big uid", { msg_type: "visitCard", payload: { uid: 300000000000000009n, title: "t", avatar: "" } }],
    ["webrtcAudio", { msg_type: "webrtcAudio", payload: { call_type: "offer", sdp: "v=0" } }],
    ["webrtcVideo", { msg_type: "webrtcVideo", payload: { call_type: 1, sdp: "v=0" } }],
    ["custom", { msg_type: "custom", payload: { custom_type: "poll", q: 1 } }],
    ["unsupported", { msg_type: "unsupported", payload: { anything: true } }],
    ["encrypted", { payload: "Q2lwaGVy", e2ee: E2EE }],
    ["C2S to a bot", { id: "C2S.1.2.a", type: "C2S", payload: { text: "hi", topic_id: 3 } }],
    ["C2G", { id: "C2G.1.2.a", type: "C2G" }],
    ["reply_to map", { reply_to: { msg_id: "C2C.1.2.b", from_id: 5 } }],
  ];
  test.each(good)("accepts %s", (_name, over) => {
    const r = validateUplink(base(over), ME, 1000);
    if (!r.ok) throw new Error(r.reason);
    expect(r.msg.from).toBe(ME);
    expect(r.msg.server_ts).toBe(1000);
    expect(typeof r.msg.payloadJson).toBe("string");
  });

  const bad: [string, Record<string, unknown>, RegExp][] = [
    ["missing id", { id: undefined }, /^id/],
    ["bad id shape", { id: "C2C.x.2.a" }, /^id/],
    ["id type mismatch", { id: "C2G.1.2.a" }, /does not match/],
    ["S2C from a client", { id: "S2C.1.2.a", type: "S2C" }, /may not send S2C/],
    ["unknown type", { type: "X" }, /^type/],
    ["from is someone else", { from: ME + 1n }, /signed-in user/],
    ["from unsafe number", { from: 2 ** 60 }, /^from/],
    ["missing to", { to: undefined }, /^to/],
    ["action on C2C", { action: "online" }, /only S2C/],
    ["missing msg_type", { msg_type: undefined }, /msg_type/],
    ["unknown msg_type", { msg_type: "gif" }, /unknown value/],
    ["text without text", { payload: { txt: "x" } }, /^payload/],
    ["payload array", { payload: ["x"] }, /must be an object/],
    ["payload string without e2ee", { payload: "Q2lw" }, /must be an object/],
    ["image without uri", { msg_type: "image", payload: { size: 1, width: 1, height: 1 } }, /payload\.uri/],
    ["file size not a number", { msg_type: "file", payload: { uri: "u", name: "n", size: "big", mime_type: "x" } }, /payload/],
    ["C2S without topic_id", { id: "C2S.1.2.a", type: "C2S", payload: { text: "hi" } }, /topic_id/],
    ["e2ee wrong version", { payload: "Q2lw", e2ee: { ...E2EE, e2ee_ver: 2 } }, /e2ee\.e2ee_ver/],
    ["e2ee no keys", { payload: "Q2lw", e2ee: { ...E2EE, keys: [] } }, /e2ee\.keys/],
    ["e2ee key without did", { payload: "Q2lw", e2ee: { ...E2EE, keys: [{ wrap_alg: "a", ek: "ZQ==" }] } }, /did/],
    ["e2ee object payload", { e2ee: E2EE }, /Base64/],
    ["e2ee non-Base64 payload", { payload: "not base64!", e2ee: E2EE }, /Base64/],
    ["e2ee missing nonce", { payload: "Q2lw", e2ee: { ...E2EE, nonce: undefined } }, /nonce/],
    ["created_at object", { created_at: {} }, /created_at/],
    ["reply_to without msg_id", { reply_to: { from_id: 1 } }, /reply_to/],
    ["msg_type naming an Object.prototype member", { msg_type: "constructor" }, /unknown value/],
    ["msg_type __proto__", { msg_type: "__proto__" }, /unknown value/],
  ];
  test.each(bad)("refuses %s", (_name, over, reason) => {
    const r = validateUplink(base(over), ME, 1000);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toMatch(reason);
  });

  test("in_reply_to names the id when it is readable", () => {
    const r = validateUplink(base({ action: "x" }), ME, 1);
    expect(r).toMatchObject({ ok: false, inReplyTo: "C2C.123456789012345678.1763888400000.aB3" });
    const r2 = validateUplink(base({ id: 5 }), ME, 1);
    expect(r2.ok).toBe(false);
    expect((r2 as { inReplyTo?: string }).inReplyTo).toBeUndefined();
  });

  test("payload stringified once, ids exact; reply_to kept in the payload, never in_reply_to", () => {
    const r = validateUplink(base({ payload: { text: "hi", uid: 300000000000000009n }, reply_to: { msg_id: "C2C.9.9.q" } }), ME, 1);
    if (!r.ok) throw new Error(r.reason);
    expect(r.msg.payloadJson).toBe('{"text":"hi","uid":300000000000000009,"reply_to":{"msg_id":"C2C.9.9.q"}}');
    expect(r.msg.in_reply_to).toBeUndefined();
  });

  test("encrypted payload stored as a JSON string literal with its metadata", () => {
    const r = validateUplink(base({ payload: "Q2lwaGVy", e2ee: E2EE }), ME, 1);
    if (!r.ok) throw new Error(r.reason);
    expect(r.msg.payloadJson).toBe('"Q2lwaGVy"');
    expect(r.msg.e2ee?.keys[0]?.did).toBe("dev-1");
  });
});

describe("fast payload predicates never accept what zod refuses", () => {
  // Field values of every kind the decoders can produce, including the lenient and the wrong ones.
  const value = fc.oneof(
    fc.string({ maxLength: 4 }),
    fc.constantFrom("", "10", "-3", "1.5", "x1", "1e3", " 1"),
    fc.double(),
    fc.integer(),
    fc.constantFrom(2 ** 53, 2 ** 60, -0, 0.5, Number.MAX_SAFE_INTEGER),
    fc.bigInt({ min: -(1n << 64n), max: 1n << 64n }),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(fc.integer(), { maxLength: 2 }),
    fc.constant({}),
  );
  const FIELDS = ["text", "content", "uri", "size", "width", "height", "name", "mime_type", "duration_ms", "latitude", "longitude", "title", "address", "quote_msg_id", "quote_text", "topic_id"];
  const payload = fc.dictionary(fc.constantFrom(...FIELDS), value, { maxKeys: 8 });

  test.each(Object.keys(FAST_PAYLOADS))("%s", (msgType) => {
    const fast = FAST_PAYLOADS[msgType]!;
    const zod = PAYLOADS[msgType]!;
    fc.assert(
      fc.property(payload, (p) => {
        if (fast(p)) expect(zod.safeParse(p).success).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  test("C2S payload", () => {
    fc.assert(
      fc.property(payload, (p) => {
        if (fastC2sPayload(p)) expect(validateUplink(base({ id: "C2S.1.2.a", type: "C2S", payload: { ...p, text: p.text } }), ME, 1).ok).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  test("the common payloads take the fast path", () => {
    const common: [string, Record<string, unknown>][] = [
      ["text", { text: "hi" }],
      ["text", { content: "hi" }],
      ["image", { uri: "u", size: 1, width: 2, height: 3 }],
      ["file", { uri: "u", name: "n", size: 10n, mime_type: "m" }],
      ["system", {}],
    ];
    for (const [t, p] of common) expect(FAST_PAYLOADS[t]!(p)).toBe(true);
    expect(fastC2sPayload({ text: "hi", topic_id: 3 })).toBe(true);
    // Not plain objects: zod decides.
    expect(FAST_PAYLOADS.system!(new Date() as never)).toBe(false);
  });
});

/** The uplink's decoder on the server (src/ws/dispatch.ts): large messages read from their bytes. */
const serverDecode = decodeUplinkBytes;

describe("large payloads are stored as they arrived, small ones encoded once", () => {
  const big = "x".repeat(LARGE_PAYLOAD_CHARS);
  const envelope = (payloadText: string) =>
    `{"id":"C2C.1.2.a", "type":"C2C","from":${ME},"to":300000000000000002,"msg_type":"text",  "payload" :${payloadText} }`;

  test("JSON text and JSON bytes: the payload's source text, spaces and all; from bytes, its UTF-8 as a view of the frame", () => {
    const payloadText = `{ "text" : "${big}", "n": 300000000000000009 }`;
    const frame = new TextEncoder().encode(envelope(payloadText));
    for (const raw of [decodeMessageText(envelope(payloadText)), { ok: true, raw: decodeMessageBytes(frame) }]) {
      if (!raw.ok || !raw.raw) throw new Error("not decoded");
      const r = validateUplink(raw.raw, ME, 1);
      if (!r.ok) throw new Error(r.reason);
      expect(r.msg.payloadJson).toBe(payloadText);
    }
    const fromBytes = validateUplink(decodeMessageBytes(frame)!, ME, 1);
    const utf8 = fromBytes.ok ? fromBytes.msg.payloadUtf8 : undefined;
    expect(utf8?.buffer).toBe(frame.buffer); // no copy
    expect(new TextDecoder().decode(utf8)).toBe(payloadText);
    const fromText = decodeMessageText(envelope(payloadText));
    const r = fromText.ok ? validateUplink(fromText.raw, ME, 1) : undefined;
    expect(r?.ok && "payloadUtf8" in r.msg).toBe(false); // a text frame: no bytes to hold
  });

  test.each([
    ["non-ASCII inside the payload", `{"text":"${"é".repeat(LARGE_PAYLOAD_CHARS)}😀✓"}`, ""],
    ["non-ASCII around it too", `{"text":"${big}","t":"ü"}`, `"note":"😀 ✓ é",`],
    ["a long string outside the payload too", `{ "text" : "${big}" }`, `"note":"${"ß".repeat(LARGE_PAYLOAD_CHARS)}",`],
    ["escapes in its long string (not shared)", `{"text":"${"a\\n\\u00e9".repeat(LARGE_PAYLOAD_CHARS / 8)}"}`, `"note":"😀",`],
  ])("bytes: %s; the view holds exactly the payload's UTF-8 (both decoders)", (_, payloadText, before) => {
    const text = `{"id":"C2C.1.2.a",${before}"type":"C2C","from":${ME},"to":3,"payload":${payloadText},"msg_type":"text","after":"ß😀"}`;
    for (const decode of [decodeMessageBytes, serverDecode]) {
      const r = validateUplink(decode(new TextEncoder().encode(text))!, ME, 1);
      if (!r.ok) throw new Error(r.reason);
      expect(r.msg.payloadJson).toBe(payloadText);
      expect(r.msg.payloadUtf8).toEqual(new TextEncoder().encode(payloadText));
    }
  });

  test("the server's decoder: a large payload's text is made only if read (not by the store's row, the protobuf push, the bus)", () => {
    const frame = new TextEncoder().encode(envelope(`{ "text" : "${"✓".repeat(LARGE_PAYLOAD_CHARS)}", "n": 1 }`));
    const r = validateUplink(serverDecode(frame)!, ME, 1);
    if (!r.ok) throw new Error(r.reason);
    const unread = () => Object.getOwnPropertyDescriptor(r.msg, "payloadJson")!.get !== undefined;
    const textUnread = () => Object.getOwnPropertyDescriptor(r.msg.payload as object, "text")!.get !== undefined;
    expect([unread(), textUnread()]).toEqual([true, true]);
    expect(r.msg.payloadUtf8?.buffer).toBe(frame.buffer);
    const row = toRow(r.msg, 9n);
    encodeMessagePb(r.msg);
    encodeBusMessage(r.msg);
    expect([unread(), textUnread()]).toEqual([true, true]);
    expect(row.payloadUtf8).toBe(r.msg.payloadUtf8!);
    expect(row.payload).toBe(`{ "text" : "${"✓".repeat(LARGE_PAYLOAD_CHARS)}", "n": 1 }`); // asked for: decoded
    expect([unread(), textUnread()]).toEqual([false, true]);
    expect((r.msg.payload as { text: string }).text).toBe("✓".repeat(LARGE_PAYLOAD_CHARS));
  });

  test("the server's decoder: a large encrypted payload (a Base64 string) is checked as a string, stored and pushed as its bytes", () => {
    const cipher = "QUJD".repeat(LARGE_PAYLOAD_CHARS / 2);
    for (const [payload, ok] of [[cipher, true], [`${cipher}!`, false]] as const) {
      const text = JSON.stringify({ ...base({ from: undefined, to: undefined }), e2ee: E2EE, payload }).replace("{", `{"from":${ME},"to":300000000000000002,`);
      const r = validateUplink(serverDecode(new TextEncoder().encode(text))!, ME, 1);
      expect(r.ok).toBe(ok);
      if (!r.ok) continue;
      expect(Object.getOwnPropertyDescriptor(r.msg, "payloadJson")!.get).toBeDefined();
      expect(new TextDecoder().decode(r.msg.payloadUtf8)).toBe(`"${cipher}"`);
      expect(r.msg.payloadJson).toBe(`"${cipher}"`);
    }
  });

  test("property: a payload checked on its stand-in gets the answer its decoded text gets", () => {
    const long = (lead: string, body: string) => `${lead}${body.repeat(LARGE_PAYLOAD_CHARS / body.length)}`;
    const strings = fc.constantFrom(
      long("", "x"),
      long("", "1"),
      long("-", "1"),
      long("", "1.5"),
      long(" ", "7"),
      long("\u3000", "7"),
      long("\u00a0", "x"),
      long("", "QUJD"),
      long("é", "水"),
      long("", "😀"),
      `${" ".repeat(LARGE_PAYLOAD_CHARS)}300000000000000002`,
      `300000000000000002${" ".repeat(LARGE_PAYLOAD_CHARS)}`,
    );
    const fields = ["text", "content", "uri", "name", "size", "width", "mime_type", "duration_ms", "latitude", "title", "address", "quote_msg_id", "quote_text", "uid", "avatar", "call_type", "sdp", "custom_type", "index", "is_end", "stream_id", "topic_id", "images", "total"];
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(PAYLOADS)), fc.constantFrom("C2C", "C2S"), fc.subarray(fields, { minLength: 1 }), strings, (msgType, type, set, s) => {
        const payload: Record<string, unknown> = { text: "t", uri: "u", name: "n", size: 1, width: 1, height: 1, mime_type: "m", duration_ms: 1, latitude: 1, longitude: 2, title: "t", address: "a", quote_msg_id: "q", quote_text: "q", uid: 5, avatar: "a", call_type: 1, sdp: "s", custom_type: "c", index: 0, is_end: true, stream_id: "s", topic_id: 1, total: 1, images: [{ uri: "u", size: 1, width: 1, height: 1 }] };
        for (const f of set) payload[f] = f === "images" ? [{ uri: s, size: s, width: 1, height: 1 }] : s;
        const text = JSON.stringify({ ...base({ type, msg_type: msgType, from: undefined, to: undefined }), payload }).replace("{", `{"from":${ME},"to":300000000000000002,`);
        const viaText = decodeMessageText(text);
        if (!viaText.ok) throw new Error("not decoded");
        const answer = (r: ReturnType<typeof validateUplink>) => (r.ok ? { ok: true, payloadJson: r.msg.payloadJson } : r);
        const expected = answer(validateUplink(viaText.raw, ME, 1));
        expect(answer(validateUplink(serverDecode(new TextEncoder().encode(text))!, ME, 1))).toEqual(expected);
        // The same payload in a protobuf message's payload field: both decoders answer alike.
        const id = type === "C2S" ? base().id.replace("C2C", "C2S") : base().id;
        const pb = encodeMessagePb({ id, type: type as "C2C", from: ME, to: 300000000000000002n, msg_type: msgType, payload: undefined, payloadJson: JSON.stringify(payload), server_ts: 0 });
        expect(answer(validateUplink(serverDecode(pb)!, ME, 1))).toEqual(answer(validateUplink(decodeMessageBytes(pb)!, ME, 1)));
      }),
      { numRuns: 200 },
    );
  }, 30_000);

  test("a small payload is encoded (normalised), as before", () => {
    const raw = decodeMessageText(envelope(`{ "text" : "hi" }`));
    if (!raw.ok) throw new Error("not decoded");
    const r = validateUplink(raw.raw, ME, 1);
    expect(r.ok && r.msg.payloadJson).toBe('{"text":"hi"}');
  });

  test.each([
    ["its default decoder", (b: Uint8Array) => decodeMessageBytes(b)],
    ["the server's decoder", serverDecode],
  ])("protobuf, %s: the payload bytes' text; reply_to merged → encoded again", (_, decode) => {
    const payloadJson = `{ "text":"${big}" }`;
    const bytes = encodeMessagePb({ id: "C2C.1.2.a", type: "C2C", from: ME, to: 5n, payload: undefined, payloadJson, msg_type: "text", server_ts: 0 });
    const raw = decode(bytes)!;
    const r = validateUplink(raw, ME, 1);
    expect(r.ok && r.msg.payloadJson).toBe(payloadJson);
    expect(r.ok && r.msg.payloadUtf8?.buffer).toBe(bytes.buffer); // the payload field's view
    expect(r.ok && new TextDecoder().decode(r.msg.payloadUtf8)).toBe(payloadJson);
    const quoted = validateUplink(Object.assign(raw, { reply_to: { msg_id: "C2C.9.9.q" } }), ME, 1); // keeps the recorded text
    expect(quoted.ok && quoted.msg.payloadJson).toBe(`{"text":"${big}","reply_to":{"msg_id":"C2C.9.9.q"}}`);
    expect(quoted.ok && quoted.msg.payloadUtf8).toBeUndefined(); // the bytes no longer describe the payload
  });

  test.each([
    ["its default decoder", (b: Uint8Array) => decodeMessageBytes(b)],
    ["the server's decoder", serverDecode],
  ])("protobuf, %s: a payload led by a byte order mark keeps bytes without it, as its text is (no mark stored)", (_, decode) => {
    const payloadJson = `{"text":"${big}"}`;
    const plain = encodeMessagePb({ id: "C2C.1.2.a", type: "C2C", from: ME, to: 5n, payload: undefined, payloadJson, msg_type: "text", server_ts: 0 });
    // The same message with EF BB BF in front of the payload field's bytes (its length prefix grows by 3).
    const marked = encodeMessagePb({ id: "C2C.1.2.a", type: "C2C", from: ME, to: 5n, payload: undefined, payloadJson: `\uFEFF${payloadJson}`, msg_type: "text", server_ts: 0 });
    expect(marked.length).toBe(plain.length + 3);
    const r = validateUplink(decode(marked)!, ME, 1);
    if (!r.ok) throw new Error(r.reason);
    expect(r.msg.payloadJson).toBe(payloadJson);
    expect(new TextDecoder("utf-8", { ignoreBOM: true }).decode(r.msg.payloadUtf8)).toBe(payloadJson);
  });

  test("protobuf, the server's decoder: a large plain payload field is not made a string; not JSON is undecodable", () => {
    const payloadJson = `{"text":"${"水".repeat(LARGE_PAYLOAD_CHARS)}","n":"${"1".repeat(5000)}"}`;
    const bytes = encodeMessagePb({ id: "C2C.1.2.a", type: "C2C", from: ME, to: 5n, payload: undefined, payloadJson, msg_type: "text", server_ts: 0 });
    const r = validateUplink(serverDecode(bytes)!, ME, 1);
    if (!r.ok) throw new Error(r.reason);
    expect(Object.getOwnPropertyDescriptor(r.msg, "payloadJson")!.get).toBeDefined();
    expect(Object.getOwnPropertyDescriptor(r.msg.payload as object, "text")!.get).toBeDefined();
    expect(Object.getOwnPropertyDescriptor(r.msg.payload as object, "n")!.value).toBe("1".repeat(5000)); // a digit first: decoded at once
    expect(r.msg.payloadJson).toBe(payloadJson);
    const broken = encodeMessagePb({ id: "C2C.1.2.a", type: "C2C", from: ME, to: 5n, payload: undefined, payloadJson: payloadJson.slice(0, -1), msg_type: "text", server_ts: 0 });
    expect([serverDecode(broken), decodeMessageBytes(broken)]).toEqual([undefined, undefined]);
  });
});
