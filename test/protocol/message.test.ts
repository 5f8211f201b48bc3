import { describe, expect, test } from "bun:test";
import { create, toBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { type ImMessage, Outbound } from "../../src/delivery/ports.ts";
import { MessageSchema, MsgDirection } from "../../src/gen/ibis/v2/message_pb.ts";
import { FrameType, MAX_FRAME_PAYLOAD, decodeFrame, DOWNLINK_FRAME_TYPES } from "../../src/protocol/frame.ts";
import { parseJson, utf8 } from "../../src/protocol/json.ts";
import { encodeMessagePb } from "../../src/protocol/pb.ts";
import {
  clientAckProto,
  clientAckText,
  decodeProtoClientAck,
  decodeProtoMessage,
  isClientAckPayload,
  isProtoClientAck,
  LARGE_PUSH_BYTES,
  largeFrame,
  messageJson,
  messageProto,
  msgFrameType,
  outboundJson,
  outboundProto,
  outboundV2Frame,
  parseClientAckBytes,
  parseClientAckText,
} from "../../src/protocol/message.ts";

// Real ids are TSIDs above 2^53: any trip through `number` would change them.
const ALICE = 7267262345678901234n;
const BOB = 7267262345678905678n;
const GROUP = 7267262399999999999n;
const TS = 1_795_000_000_123;
const c2cId = `C2C.${7267262345678999999n}.${TS}.ab12`;

const e2ee = {
  e2ee: true as const,
  e2ee_ver: 1,
  e2ee_suite: "RSA-OAEP-256+AES-256-GCM",
  nonce: "bm9uY2UxMjM0NTY=",
  keys: [
    { did: "phone-1", kid: "k2", wrap_alg: "RSA-OAEP-256", ek: "ZWsx" },
    { did: "web-1", wrap_alg: "RSA-OAEP-256", ek: "ZWsy" },
  ],
};

const msgs: Record<string, ImMessage> = {
  c2cText: { id: c2cId, type: "C2C", from: ALICE, to: BOB, payload: { text: "hi ✓" }, msg_type: "text", server_ts: TS, created_at: TS - 5 },
  c2gPayloadJson: {
    id: `C2G.1.${TS}.x`,
    type: "C2G",
    from: ALICE,
    to: GROUP,
    payload: "ignored: payloadJson wins",
    payloadJson: `{"text":"@bob","at_uids":[${BOB}]}`,
    msg_type: "text",
    server_ts: TS,
    created_at: "2026-11-23T08:00:00.000Z",
  },
  s2cNotice: { id: `S2C.2.${TS}.y`, type: "S2C", from: null, to: BOB, payload: { content: "bye" }, action: "logged_another_device", server_ts: TS },
  encrypted: { id: `C2C.3.${TS}.z`, type: "C2C", from: ALICE, to: BOB, payload: "Q2lwaGVydGV4dA==", msg_type: "text", server_ts: TS, e2ee },
  serverAck: { id: c2cId, type: "C2C_SERVER_ACK", from: ALICE, to: BOB, payload: {}, msg_type: "text", server_ts: TS, in_reply_to: c2cId },
  clientAckConfirm: { id: c2cId, type: "CLIENT_ACK_CONFIRM", from: null, to: BOB, payload: undefined, action: "CLIENT_ACK_CONFIRM", server_ts: TS, in_reply_to: c2cId },
};

describe("messageJson", () => {
  test("C2C: exact ids, field order, optional fields omitted", () => {
    expect(messageJson(msgs.c2cText!)).toBe(
      `{"id":"${c2cId}","type":"C2C","from":${ALICE},"to":${BOB},"payload":{"text":"hi ✓"},"created_at":${TS - 5},"server_ts":${TS},"msg_type":"text"}`,
    );
  });

  test("payloadJson is spliced verbatim (big id inside stays exact)", () => {
    const text = messageJson(msgs.c2gPayloadJson!);
    expect(text).toContain(`"payload":{"text":"@bob","at_uids":[${BOB}]}`);
    expect(text).toContain(`"created_at":"2026-11-23T08:00:00.000Z"`);
    expect((parseJson(text) as { payload: { at_uids: bigint[] } }).payload.at_uids[0]).toBe(BOB);
  });

  test("S2C: from is the empty string, action present, no msg_type", () => {
    expect(parseJson(messageJson(msgs.s2cNotice!))).toEqual({
      id: `S2C.2.${TS}.y`,
      type: "S2C",
      from: "",
      to: BOB,
      payload: { content: "bye" },
      server_ts: TS,
      action: "logged_another_device",
    });
  });

  test("encrypted: payload is the Base64 string, e2ee metadata as given", () => {
    const parsed = parseJson(messageJson(msgs.encrypted!)) as Record<string, unknown>;
    expect(parsed.payload).toBe("Q2lwaGVydGV4dA==");
    expect(parsed.e2ee).toEqual(e2ee);
  });

  test("in_reply_to and an absent payload", () => {
    const parsed = parseJson(messageJson(msgs.clientAckConfirm!)) as Record<string, unknown>;
    expect(parsed.in_reply_to).toBe(c2cId);
    expect("payload" in parsed).toBe(false);
    expect(parsed.from).toBe("");
  });

  test("strings are escaped", () => {
    const m = { ...msgs.c2cText!, id: 'C2C.1.2."\\\n', payload: { text: '"quoted"\u2028' } };
    expect((parseJson(messageJson(m)) as ImMessage).id).toBe('C2C.1.2."\\\n');
  });
});

describe("protobuf", () => {
  // The proto path carries created_at in ms; everything else matches the parsed JSON object.
  const jsonShape = (m: ImMessage) => {
    const o = parseJson(messageJson(m)) as Record<string, unknown>;
    if (typeof o.created_at === "string") o.created_at = Date.parse(o.created_at);
    return o;
  };

  for (const [name, msg] of Object.entries(msgs)) {
    test(`${name}: decodeProtoMessage(messageProto(m)) has the JSON shape`, () => {
      expect(decodeProtoMessage(messageProto(msg))).toEqual(jsonShape(msg));
    });
  }

  test("property: protobuf and JSON paths give the same object for random messages", () => {
    // Real ids are above 2^53 (below that JSON parses to number, protobuf to bigint; toId takes both).
    const id = fc.bigInt({ min: 1n << 53n, max: (1n << 63n) - 1n });
    const nonEmpty = fc.string({ minLength: 1, maxLength: 12 });
    const key = fc.record({ did: nonEmpty, kid: fc.option(nonEmpty, { nil: undefined }), wrap_alg: nonEmpty, ek: nonEmpty }).map((k) => {
      if (k.kid === undefined) delete k.kid;
      return k;
    });
    const meta = fc.record({
      e2ee: fc.constant(true as const),
      e2ee_ver: fc.integer({ min: 1, max: 9 }),
      e2ee_suite: nonEmpty,
      nonce: nonEmpty,
      keys: fc.array(key, { maxLength: 3 }),
    });
    const message = fc.record(
      {
        id: fc.string({ maxLength: 40 }),
        type: fc.constantFrom("C2C", "C2G", "C2S", "S2C", "C2C_SERVER_ACK", "CLIENT_ACK_CONFIRM"),
        from: fc.option(id, { nil: null }),
        to: id,
        payload: fc.jsonValue().map((v) => (Object.is(v, -0) ? 0 : v)),
        msg_type: fc.constantFrom("text", "image", "visitCard", "webrtcVideo", "unsupported"),
        action: nonEmpty,
        created_at: fc.integer({ min: 1, max: 2 ** 45 }),
        server_ts: fc.integer({ min: 1, max: 2 ** 45 }),
        e2ee: meta,
        in_reply_to: nonEmpty,
      },
      { requiredKeys: ["id", "type", "from", "to", "payload", "server_ts"] },
    );
    fc.assert(
      fc.property(message, (m) => {
        const msg = m as ImMessage;
        expect(decodeProtoMessage(messageProto(msg))).toEqual(jsonShape(msg));
      }),
      { numRuns: 300 },
    );
  });

  test("field numbers of §4.5 on the wire", () => {
    const bytes = messageProto(msgs.c2cText!);
    // id is field 1 (tag 0x0a), type field 2 (tag 0x10, C2C = 1), from sint64 field 3 (tag 0x18, zigzag).
    expect([...bytes.subarray(0, 2)]).toEqual([0x0a, c2cId.length]);
    expect(bytes[2 + c2cId.length]).toBe(0x10);
    expect(bytes[3 + c2cId.length]).toBe(MsgDirection.C2C);
    expect(bytes[4 + c2cId.length]).toBe(0x18);
  });

  test("payload bytes are the payload's JSON text (encrypted: a JSON string literal)", () => {
    const plain = decodeProtoMessage(messageProto(msgs.c2gPayloadJson!));
    expect(plain?.payload).toEqual({ text: "@bob", at_uids: [BOB] });
    const raw = create(MessageSchema, { id: "C2C.1.2.3", type: MsgDirection.C2C, to: 1n });
    raw.payload = utf8('"Q2lwaGVydGV4dA=="');
    expect(decodeProtoMessage(toBinary(MessageSchema, raw))?.payload).toBe("Q2lwaGVydGV4dA==");
  });

  test("an encrypted payload may also arrive as bare Base64 text; a plain one may not", () => {
    const raw = create(MessageSchema, { id: "C2C.1.2.3", type: MsgDirection.C2C, to: 1n, payload: utf8("Q2lwaGVy+/==") });
    expect(decodeProtoMessage(toBinary(MessageSchema, raw))).toBeUndefined();
    raw.e2ee = { $typeName: "ibis.v2.E2ee", e2ee: true, e2eeVer: 1, e2eeSuite: "s", nonce: "n", keys: [] };
    expect(decodeProtoMessage(toBinary(MessageSchema, raw))?.payload).toBe("Q2lwaGVy+/==");
  });

  test("not decodable → undefined", () => {
    const cases: [string, Uint8Array][] = [
      ["JSON text", utf8(`{"id":"C2C.1.2.3","type":"C2C"}`)],
      ["CLIENT_ACK text", utf8("CLIENT_ACK,C2C,C2C.1.2.3,d1")],
      ["empty", new Uint8Array(0)],
      ["truncated", messageProto(msgs.c2cText!).subarray(0, 20)],
      ["unknown direction", toBinary(MessageSchema, create(MessageSchema, { id: "x", type: 99 as MsgDirection }))],
      ["no direction", toBinary(MessageSchema, create(MessageSchema, { id: "x", to: 5n }))],
    ];
    for (const [name, bytes] of cases) expect(decodeProtoMessage(bytes), name).toBeUndefined();
  });

  test("a message with no protobuf form throws", () => {
    expect(() => messageProto({ ...msgs.c2cText!, type: "C2X" })).toThrow(TypeError);
    expect(() => messageProto({ ...msgs.c2cText!, msg_type: "hologram" })).toThrow(TypeError);
    expect(() => messageProto({ ...msgs.c2cText!, msg_type: "constructor" })).toThrow(TypeError);
  });

  test("random bytes never throw out of the protobuf decoders", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 128 }), (bytes) => {
        decodeProtoMessage(bytes);
        decodeProtoClientAck(bytes);
        isProtoClientAck(bytes);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("client acks", () => {
  const ack = { type: "C2C" as const, msgId: c2cId, did: "phone-1" };

  const textCases: [string, ReturnType<typeof parseClientAckText>][] = [
    [`CLIENT_ACK,C2C,${c2cId},phone-1`, ack],
    [`CLIENT_ACK,S2C,S2C.1.2.3,web-9\n`, { type: "S2C", msgId: "S2C.1.2.3", did: "web-9" }],
    [`CLIENT_ACK,C2X,${c2cId},phone-1`, undefined],
    [`CLIENT_ACK,C2C_SERVER_ACK,${c2cId},phone-1`, undefined],
    [`CLIENT_ACK,C2C,${c2cId}`, undefined],
    [`CLIENT_ACK,C2C,${c2cId},phone-1,extra`, undefined],
    [`CLIENT_ACK,C2C,,phone-1`, undefined],
    [`CLIENT_ACK,C2C,${c2cId},`, undefined],
    [`client_ack,C2C,${c2cId},phone-1`, undefined],
    [`{"type":"CLIENT_ACK"}`, undefined],
  ];
  for (const [text, expected] of textCases) {
    test(`parseClientAckText ${JSON.stringify(text)}`, () => {
      expect(parseClientAckText(text)).toEqual(expected as never);
    });
  }

  test("text form from bytes, prefix checked in place on a view", () => {
    const backing = utf8(`xxxxCLIENT_ACK,C2C,${c2cId},phone-1`);
    const view = backing.subarray(4);
    expect(isClientAckPayload(view)).toBe(true);
    expect(isClientAckPayload(backing)).toBe(false);
    expect(isClientAckPayload(utf8("CLIENT_ACK"))).toBe(false);
    expect(parseClientAckBytes(view)).toEqual(ack);
    expect(parseClientAckBytes(Uint8Array.of(...utf8("CLIENT_ACK,C2C,"), 0xff, 0xfe))).toBeUndefined();
    expect(parseClientAckText(clientAckText(ack))).toEqual(ack);
  });

  test("protobuf client-ack round trip, told apart from a Message by field 2", () => {
    const bytes = clientAckProto(ack);
    expect(isProtoClientAck(bytes)).toBe(true);
    expect(decodeProtoClientAck(bytes)).toEqual(ack);
    for (const t of ["C2G", "C2S", "S2C"] as const) expect(decodeProtoClientAck(clientAckProto({ ...ack, type: t }))?.type).toBe(t);
    const msg = messageProto(msgs.c2cText!);
    expect(isProtoClientAck(msg)).toBe(false);
    expect(decodeProtoClientAck(msg)).toBeUndefined();
    expect(decodeProtoClientAck(clientAckProto({ ...ack, did: "" }))).toBeUndefined();
    expect(decodeProtoClientAck(utf8(clientAckText(ack)))).toBeUndefined();
  });
});

describe("Outbound encodings", () => {
  test("each encoding is computed once and cached", () => {
    const out = new Outbound(msgs.c2cText!);
    const json = outboundJson(out);
    const pb = outboundProto(out);
    const v2 = outboundV2Frame(out);
    expect(out.encoded).toEqual({ json, pb, v2 });
    expect(outboundJson(out)).toBe(json);
    expect(outboundProto(out)).toBe(pb);
    expect(outboundV2Frame(out)).toBe(v2);
    // The cache is what is served: a poisoned entry proves no re-encode happens.
    out.encoded.v2 = "sentinel";
    expect(outboundV2Frame(out)).toBe("sentinel");
  });

  const frameTypes: [string, number][] = [
    ["C2C", FrameType.MsgC2C],
    ["C2G", FrameType.MsgC2G],
    ["C2S", FrameType.MsgC2S],
    ["S2C", FrameType.MsgS2C],
    ["C2C_SERVER_ACK", FrameType.MsgS2C],
    ["CLIENT_ACK_CONFIRM", FrameType.MsgS2C],
    ["", FrameType.MsgS2C],
  ];
  for (const [type, frameType] of frameTypes) {
    test(`svc.v2 frame Type for ${JSON.stringify(type)} is 0x${frameType.toString(16)}`, () => {
      expect(msgFrameType(type)).toBe(frameType);
    });
  }

  test("svc.v2 frame: flags 0, protobuf inside, decodes to the message", () => {
    for (const msg of Object.values(msgs)) {
      const v2 = outboundV2Frame(new Outbound(msg));
      if (typeof v2 === "string") throw new Error("unexpected JSON fallback");
      const f = decodeFrame(v2, DOWNLINK_FRAME_TYPES);
      if (!f.ok) throw new Error(f.reason);
      expect(f.flags).toBe(0);
      expect(f.type).toBe(msgFrameType(msg.type));
      expect(f.payload).toEqual(messageProto(msg));
      expect(decodeProtoMessage(f.payload)?.id).toBe(msg.id);
    }
  });

  test("no protobuf form → JSON text for svc-protobuf and svc.v2", () => {
    const out = new Outbound({ ...msgs.c2cText!, msg_type: "hologram" });
    const json = outboundJson(out);
    expect(outboundProto(out)).toBe(json);
    expect(outboundV2Frame(out)).toBe(json);
  });

  test("larger than a frame can hold → JSON text on svc.v2, protobuf still bare", () => {
    const big = `"${"a".repeat(MAX_FRAME_PAYLOAD)}"`;
    const out = new Outbound({ ...msgs.encrypted!, payloadJson: big });
    expect(outboundProto(out)).toBeInstanceOf(Uint8Array);
    const v2 = outboundV2Frame(out);
    expect(typeof v2).toBe("string");
    expect((v2 as string).length).toBeGreaterThan(MAX_FRAME_PAYLOAD);
  });
});

describe("large pushes from the kept buffer (largeFrame)", () => {
  const held = (text: string): ImMessage => {
    const payloadJson = JSON.stringify({ text });
    return { id: c2cId, type: "C2C", from: ALICE, to: BOB, msg_type: "text", payload: undefined, payloadJson, payloadUtf8: utf8(payloadJson), server_ts: TS };
  };

  test("the same bytes as the cached encodings, never cached, the buffer written again by the next message", () => {
    const a = new Outbound(held("a".repeat(LARGE_PUSH_BYTES + 10)));
    const b = new Outbound(held("b".repeat(LARGE_PUSH_BYTES)));
    const aV2 = outboundV2Frame(new Outbound(a.msg)) as Uint8Array;
    const frameA = largeFrame(a, "v2")!;
    expect(frameA).toEqual(aV2);
    // The next device of the same push: the bytes in the buffer, not a second encode (svc-protobuf: past the header).
    expect(largeFrame(a, "v2")).toBe(frameA);
    const pbA = largeFrame(a, "pb")!;
    expect(pbA.buffer).toBe(frameA.buffer);
    expect(pbA).toEqual(outboundProto(new Outbound(a.msg)) as Uint8Array);
    expect(a.encoded).toEqual({});
    const frameB = largeFrame(b, "v2")!;
    expect(frameB.buffer).toBe(frameA.buffer); // one buffer: a frame is good until another message's (sent at once)
    expect(frameB).toEqual(outboundV2Frame(new Outbound(b.msg)) as Uint8Array);
    // a's frame is overwritten (why a large frame is sent at once, never gathered: test/ws/session.test.ts);
    // asked for again (a retry), a is encoded again.
    expect(frameA).not.toEqual(aV2);
    expect(largeFrame(a, "v2")).toEqual(aV2);
  });

  test("only for a payload held as at least LARGE_PUSH_BYTES bytes", () => {
    const small = held("a".repeat(LARGE_PUSH_BYTES - 100));
    expect(largeFrame(new Outbound(small), "v2")).toBeUndefined();
    const text = held("a".repeat(LARGE_PUSH_BYTES));
    expect(largeFrame(new Outbound({ ...text, payloadUtf8: undefined }), "v2")).toBeUndefined(); // text only: cached path
  });

  test("encodeMessagePb into a larger, dirty buffer answers exactly the message", () => {
    const msg = held("x".repeat(300));
    const dirty = new Uint8Array(4096).fill(0xee);
    const into = encodeMessagePb(msg, 9, () => dirty);
    const plain = encodeMessagePb(msg, 9);
    expect(into.buffer).toBe(dirty.buffer);
    expect(into.subarray(9)).toEqual(plain.subarray(9));
    expect(into.length).toBe(plain.length);
  });
});
