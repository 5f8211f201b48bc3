import { describe, expect, test } from "bun:test";
import { create, type DescMessage, fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import fc from "fast-check";
import { type ImMessage, Outbound } from "../../src/delivery/ports.ts";
import {
  ClientAckSchema,
  E2eeKeySchema,
  E2eeSchema,
  MessageSchema,
  MsgDirection,
  MsgType,
} from "../../src/gen/ibis/v2/message_pb.ts";
import { stringifyJson, utf8 } from "../../src/protocol/json.ts";
import { outboundProto, outboundV2Frame } from "../../src/protocol/message.ts";
import {
  CLIENT_ACK_FIELDS,
  DIRECTION,
  decodeClientAckPb,
  decodeMessagePb,
  E2EE_FIELDS,
  E2EE_KEY_FIELDS,
  encodeClientAckPb,
  encodeMessagePb,
  MESSAGE_FIELDS,
  MSG_TYPE,
} from "../../src/protocol/pb.ts";
import { SMALL_ARRAY } from "../../src/protocol/frame.ts";

// The hand-written codec must stay the generated schema's twin.
const fieldsOf = (schema: DescMessage) => Object.fromEntries(schema.fields.map((f) => [f.name, f.number]));

test("field tables match the generated schema", () => {
  expect(fieldsOf(MessageSchema)).toEqual(MESSAGE_FIELDS);
  expect(fieldsOf(E2eeSchema)).toEqual(E2EE_FIELDS);
  expect(fieldsOf(E2eeKeySchema)).toEqual(E2EE_KEY_FIELDS);
  expect(fieldsOf(ClientAckSchema)).toEqual(CLIENT_ACK_FIELDS);
  const enumValues = (e: object) => Object.values(e).filter((v) => typeof v === "number").sort();
  expect(Object.values(DIRECTION).sort()).toEqual(enumValues(MsgDirection).filter((v) => v !== 0));
  expect(Object.values(MSG_TYPE).sort()).toEqual(enumValues(MsgType));
});

/** The reflective reference encoder (protobuf-es create + toBinary). */
function referenceEncode(msg: ImMessage): Uint8Array {
  const payload = msg.payloadJson ?? (msg.payload === undefined ? undefined : stringifyJson(msg.payload));
  return toBinary(
    MessageSchema,
    create(MessageSchema, {
      id: msg.id,
      type: DIRECTION[msg.type],
      from: msg.from ?? 0n,
      to: msg.to,
      msgType: MSG_TYPE[msg.msg_type ?? ""],
      action: msg.action ?? "",
      payload: payload === undefined ? new Uint8Array(0) : utf8(payload),
      serverTs: BigInt(msg.server_ts),
      createdAt: typeof msg.created_at === "number" ? BigInt(msg.created_at) : 0n,
      e2ee: msg.e2ee && {
        e2ee: msg.e2ee.e2ee,
        e2eeVer: msg.e2ee.e2ee_ver,
        e2eeSuite: msg.e2ee.e2ee_suite,
        nonce: msg.e2ee.nonce,
        keys: msg.e2ee.keys.map((k) => ({ did: k.did, kid: k.kid, wrapAlg: k.wrap_alg, ek: k.ek })),
      },
      inReplyTo: msg.in_reply_to ?? "",
    }),
  );
}

const str = fc.string({ maxLength: 16 });
const id = fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n });
const message = fc.record(
  {
    id: str,
    type: fc.constantFrom(...Object.keys(DIRECTION)),
    from: fc.option(id, { nil: null }),
    to: id,
    payload: fc.jsonValue(),
    payloadJson: fc.constantFrom(`{"text":"ünï"}`, `"QUJD"`, ""),
    msg_type: fc.constantFrom(...Object.keys(MSG_TYPE)),
    action: str,
    created_at: fc.integer({ min: 0, max: 2 ** 50 }),
    server_ts: fc.integer({ min: 0, max: 2 ** 50 }),
    e2ee: fc.record({
      e2ee: fc.constant(true as const),
      e2ee_ver: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      e2ee_suite: str,
      nonce: str,
      keys: fc.array(fc.record({ did: str, kid: str, wrap_alg: str, ek: str }, { requiredKeys: ["did", "wrap_alg", "ek"] }), { maxLength: 3 }),
    }),
    in_reply_to: str,
  },
  { requiredKeys: ["id", "type", "from", "to", "payload", "server_ts"] },
);

describe("hand-written Message codec", () => {
  test("property: byte-identical to protobuf-es toBinary", () => {
    fc.assert(
      fc.property(message, (m) => {
        const msg = m as ImMessage;
        expect(encodeMessagePb(msg)).toEqual(referenceEncode(msg));
      }),
      { numRuns: 500 },
    );
  });

  test("property: strings of every length and code unit (lone surrogates, long payloads) encode like toBinary", () => {
    // Short strings are measured and written by hand, long ones natively: both must match TextEncoder.
    const any = fc.string({ unit: "binary", minLength: 0, maxLength: 300 });
    fc.assert(
      fc.property(any, any, any, fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), (text, id, action, from) => {
        const msg: ImMessage = { id, type: "C2C", from, to: 7n, payload: {}, payloadJson: text, action, server_ts: 1, in_reply_to: id };
        expect(encodeMessagePb(msg)).toEqual(referenceEncode(msg));
      }),
      { numRuns: 300 },
    );
  });

  test("a message's strings encode alike in a buffer of at most SMALL_ARRAY bytes (copied in whole) and a larger one (through a view)", () => {
    // [text unit, repeats (12 and 5 bytes a unit), whether the message's buffer is over SMALL_ARRAY]
    const cases = [["é中😀\ud800", 20, false], ["é中😀\ud800", 60, false], ["é中😀\ud800", 90, true], ["ascii", 100, false], ["ascii", 200, true]] as const;
    for (const [unit, n, large] of cases) {
      const msg: ImMessage = { id: "C2C.1.2.3", type: "C2C", from: 1n, to: 2n, payload: {}, payloadJson: unit.repeat(n), server_ts: 1 };
      const out = encodeMessagePb(msg);
      expect([unit, n, out.length > SMALL_ARRAY]).toEqual([unit, n, large]);
      expect(out).toEqual(referenceEncode(msg));
    }
  });

  test("int64 fields: negative, past 2^53, non-integer", () => {
    const base: ImMessage = { id: "C2C.1.2.3", type: "C2C", from: 1n, to: 2n, payload: {}, server_ts: -5, created_at: "18446744073709551615" };
    for (const created_at of [-1, 2 ** 53 + 2, "9223372036854775807", "2026-01-02T03:04:05Z"]) {
      const msg = { ...base, created_at };
      const ref = { ...msg, created_at: typeof created_at === "string" ? undefined : created_at };
      if (typeof created_at === "number") expect(encodeMessagePb(msg)).toEqual(referenceEncode(ref));
      else expect(() => encodeMessagePb(msg)).not.toThrow();
    }
    expect(() => encodeMessagePb({ ...base, server_ts: 1.5 })).toThrow();
  });

  test("reserve leaves zeroed room in front", () => {
    const msg: ImMessage = { id: "C2C.1.2.3", type: "C2C", from: 1n, to: 2n, payload: {}, server_ts: 3 };
    const plain = encodeMessagePb(msg);
    const roomy = encodeMessagePb(msg, 9);
    expect([...roomy.subarray(0, 9)]).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(roomy.subarray(9)).toEqual(plain);
  });

  test("protobuf-es fromBinary reads what we decode the same way", () => {
    const msg: ImMessage = {
      id: "C2G.9.8.7",
      type: "C2G",
      from: 7267262345678901234n,
      to: 7267262399999999999n,
      payload: "QUJD",
      msg_type: "imageMulti",
      server_ts: 1_795_000_000_123,
      created_at: 1_795_000_000_000,
      e2ee: { e2ee: true, e2ee_ver: 1, e2ee_suite: "S", nonce: "N", keys: [{ did: "a", kid: "", wrap_alg: "W", ek: "E" }] },
      in_reply_to: "C2G.1.2.3",
    };
    const bytes = encodeMessagePb(msg);
    const ref = fromBinary(MessageSchema, bytes);
    expect(ref.from).toBe(msg.from!);
    expect(ref.e2ee?.keys[0]?.kid).toBe(""); // explicit presence survives an empty kid
    expect(decodeMessagePb(bytes)).toEqual({
      id: "C2G.9.8.7",
      type: "C2G",
      from: 7267262345678901234n,
      to: 7267262399999999999n,
      payload: "QUJD",
      created_at: 1_795_000_000_000,
      server_ts: 1_795_000_000_123,
      msg_type: "imageMulti",
      e2ee: msg.e2ee,
      in_reply_to: "C2G.1.2.3",
    });
  });

  test("repeated embedded e2ee merges; unknown fields are skipped", () => {
    const w = new BinaryWriter();
    w.tag(2, WireType.Varint).int32(MsgDirection.C2C);
    w.tag(10, WireType.LengthDelimited).fork().tag(1, WireType.Varint).bool(true).tag(5, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string("d1").join().join();
    w.tag(99, WireType.LengthDelimited).string("future field");
    w.tag(10, WireType.LengthDelimited).fork().tag(4, WireType.LengthDelimited).string("nonce").tag(5, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string("d2").join().join();
    const out = decodeMessagePb(w.finish());
    expect(out?.e2ee).toEqual({ e2ee: true, e2ee_ver: 0, e2ee_suite: "", nonce: "nonce", keys: [{ did: "d1", wrap_alg: "", ek: "" }, { did: "d2", wrap_alg: "", ek: "" }] });
  });

  const bad: [string, () => Uint8Array][] = [
    ["id with a varint wire type", () => new BinaryWriter().tag(2, WireType.Varint).int32(1).tag(1, WireType.Varint).int32(5).finish()],
    ["type as a string", () => new BinaryWriter().tag(2, WireType.LengthDelimited).string("C2C").finish()],
    [
      "e2ee key whose length overruns its parent",
      () => {
        const inner = new BinaryWriter().tag(1, WireType.Varint).bool(true).tag(5, WireType.LengthDelimited).uint32(50).finish();
        return new BinaryWriter().tag(2, WireType.Varint).int32(1).tag(10, WireType.LengthDelimited).bytes(inner).tag(1, WireType.LengthDelimited).string("x".repeat(60)).finish();
      },
    ],
    ["payload that is not JSON on a plain message", () => new BinaryWriter().tag(2, WireType.Varint).int32(1).tag(7, WireType.LengthDelimited).string("{oops").finish()],
  ];
  for (const [name, make] of bad) test(`${name} → undefined`, () => expect(decodeMessagePb(make())).toBeUndefined());
});

describe("a payload held as bytes", () => {
  test("is copied into the field: the same bytes as encoding its text", () => {
    for (const payloadJson of ['{"text":"hi"}', `{"text":"${"ü😀".repeat(40_000)}"}`, `{"text":"${"x".repeat(70_000)}"}`]) {
      const msg: ImMessage = { id: "C2C.1.2.a", type: "C2C", from: 3n, to: 4n, payload: undefined, payloadJson, msg_type: "text", server_ts: 5 };
      const utf8Held = encodeMessagePb({ ...msg, payloadUtf8: utf8(payloadJson) });
      expect(utf8Held).toEqual(encodeMessagePb(msg));
      expect(decodeMessagePb(utf8Held)?.payload).toEqual(JSON.parse(payloadJson));
    }
  });

  test("the held bytes are what goes in (bytes unlike the text, never so outside this test, show it)", () => {
    const msg: ImMessage = { id: "C2C.1.2.a", type: "C2C", from: 3n, to: 4n, payload: undefined, payloadJson: '{"text":"from text"}', msg_type: "text", server_ts: 5 };
    const held = encodeMessagePb({ ...msg, payloadUtf8: utf8('{"text":"from the bytes"}') });
    expect(decodeMessagePb(held)?.payload).toEqual({ text: "from the bytes" });
  });
});

describe("hand-written ClientAck codec", () => {
  test("byte-identical to toBinary and read back by fromBinary", () => {
    const ack = { type: "C2S" as const, msgId: "C2S.1.2.3", did: "dev" };
    const bytes = encodeClientAckPb(ack);
    expect(bytes).toEqual(
      toBinary(ClientAckSchema, create(ClientAckSchema, { type: MsgDirection.CLIENT_ACK, msgDirection: MsgDirection.C2S, msgId: ack.msgId, did: ack.did })),
    );
    expect(decodeClientAckPb(bytes)).toEqual(ack);
  });

  test("a Message is not an ack; a broken ack is null", () => {
    expect(decodeClientAckPb(encodeMessagePb({ id: "x", type: "C2C", from: 1n, to: 2n, payload: {}, server_ts: 1 }))).toBeUndefined();
    const ackTypeOnly = new BinaryWriter().tag(2, WireType.Varint).int32(MsgDirection.CLIENT_ACK).finish();
    expect(decodeClientAckPb(ackTypeOnly)).toBeNull();
    const truncated = encodeClientAckPb({ type: "C2C", msgId: "C2C.1.2.3", did: "d" });
    expect(decodeClientAckPb(truncated.subarray(0, truncated.length - 1))).toBeNull();
    const badDirection = new BinaryWriter().tag(2, WireType.Varint).int32(5).tag(12, WireType.Varint).int32(MsgDirection.CLIENT_ACK_CONFIRM).tag(13, WireType.LengthDelimited).string("m").tag(14, WireType.LengthDelimited).string("d").finish();
    expect(decodeClientAckPb(badDirection)).toBeNull();
  });
});

test("Outbound: svc-protobuf and svc.v2 share one buffer", () => {
  const out = new Outbound({ id: "C2G.1.2.3", type: "C2G", from: 1n, to: 2n, payload: { text: "x" }, msg_type: "text", server_ts: 5 });
  const v2 = outboundV2Frame(out) as Uint8Array;
  const pb = outboundProto(out) as Uint8Array;
  expect(pb.buffer).toBe(v2.buffer);
  expect(pb.byteOffset).toBe(v2.byteOffset + 9);
  expect(v2.subarray(9)).toEqual(pb);
});
