import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { ImMessage } from "../../src/delivery/ports.ts";
import { AckDirection, ackFrame, decodeFrame, FRAME_HEADER_SIZE } from "../../src/protocol/frame.ts";
import { MAX_JSON_DEPTH, utf8 } from "../../src/protocol/json.ts";
import { clientAckProto, messageProto } from "../../src/protocol/message.ts";
import {
  decodeAck,
  decodeAckText,
  decodeMessageBytes,
  decodeMessageText,
  frameAckToClientAck,
  tsidSegment,
} from "../../src/protocol/uplink.ts";

const BOB = 7267262345678905678n;
const ack = { type: "C2G" as const, msgId: "C2G.7267262345678999999.1795000000123.q", did: "d1" };
const msg: ImMessage = { id: "C2C.1.2.3", type: "C2C", from: 7n, to: BOB, payload: { text: "x" }, msg_type: "text", server_ts: 5 };

describe("decodeAck", () => {
  const cases: [string, Uint8Array, unknown][] = [
    ["text ack", utf8(`CLIENT_ACK,C2G,${ack.msgId},d1`), ack],
    ["protobuf ack", clientAckProto(ack), ack],
    ["malformed text ack", utf8("CLIENT_ACK,NOPE"), null],
    ["protobuf ack without did", clientAckProto({ ...ack, did: "" }), null],
    ["JSON message", utf8(` {"type":"C2C"}`), undefined],
    ["protobuf message", messageProto(msg), undefined],
    ["garbage", Uint8Array.of(0xff, 0x00, 0x13), undefined],
    ["empty", new Uint8Array(0), undefined],
  ];
  for (const [name, bytes, expected] of cases) {
    test(name, () => expect(decodeAck(bytes)).toEqual(expected as never));
  }

  test("text form on text connections", () => {
    expect(decodeAckText(`CLIENT_ACK,C2G,${ack.msgId},d1`)).toEqual(ack);
    expect(decodeAckText("CLIENT_ACK,C2G")).toBeNull();
    expect(decodeAckText(`{"type":"CLIENT_ACK"}`)).toBeUndefined();
  });
});

describe("decodeMessageBytes (JSON object first, else protobuf)", () => {
  test("JSON object, ids exact", () => {
    expect(decodeMessageBytes(utf8(`\n{"id":"C2C.1.2.3","type":"C2C","to":${BOB}}`))).toEqual({ id: "C2C.1.2.3", type: "C2C", to: BOB });
  });

  test("protobuf message", () => {
    expect(decodeMessageBytes(messageProto(msg))).toMatchObject({ id: "C2C.1.2.3", type: "C2C", from: 7n, to: BOB, payload: { text: "x" } });
  });

  const undecodable: [string, Uint8Array][] = [
    ["JSON array", utf8("[1,2]")],
    ["broken JSON", utf8(`{"id":`)],
    ["plain text", utf8("hello")],
    ["invalid UTF-8 after a brace", Uint8Array.of(0x7b, 0xff, 0xfe)],
    ["empty", new Uint8Array(0)],
  ];
  for (const [name, bytes] of undecodable) {
    test(`${name} → undefined`, () => expect(decodeMessageBytes(bytes)).toBeUndefined());
  }

  test("random bytes never throw", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 96 }), (b) => {
        decodeMessageBytes(b);
        decodeAck(b);
      }),
      { numRuns: 2000 },
    );
  });
});

test("JSON nested past MAX_JSON_DEPTH is refused before it is handled (text: invalid_json; binary: undecodable)", () => {
  const deep = (n: number) => `{"id":"C2C.1.2.3","payload":${'{"a":'.repeat(n)}1${"}".repeat(n)}}`;
  expect(decodeMessageText(deep(60_000))).toEqual({ ok: false, reason: "invalid_json" });
  expect(decodeMessageBytes(utf8(deep(60_000)))).toBeUndefined();
  expect(decodeMessageText(deep(MAX_JSON_DEPTH - 1)).ok).toBe(true);
  expect(decodeMessageBytes(utf8(deep(MAX_JSON_DEPTH - 1)))).toBeDefined();
});

test("decodeMessageText", () => {
  expect(decodeMessageText(`{"to":${BOB}}`)).toEqual({ ok: true, raw: { to: BOB } });
  expect(decodeMessageText("{nope")).toEqual({ ok: false, reason: "invalid_json" });
  expect(decodeMessageText("42")).toEqual({ ok: false, reason: "invalid_message" });
  expect(decodeMessageText("null")).toEqual({ ok: false, reason: "invalid_message" });
});

describe("frame ACK → client-ack", () => {
  test("direction from flags, id as decimal tsid, did from the connection", () => {
    for (const [name, dir] of Object.entries(AckDirection)) {
      const f = decodeFrame(ackFrame(0x1234567890abcdefn, dir));
      if (!f.ok) throw new Error(f.reason);
      expect(frameAckToClientAck(f.payload, f.flags, "conn-device")).toEqual({
        type: name.toUpperCase() as never,
        msgId: "1311768467294899695",
        did: "conn-device",
        tsidOnly: true,
      });
    }
    expect(frameAckToClientAck(ackFrame(1n, 0).subarray(FRAME_HEADER_SIZE, 16), 0, "d")).toBeUndefined();
  });

  test("tsidSegment names what a frame ACK carries", () => {
    expect(tsidSegment("C2C.1311768467294899695.1795000000123.ab")).toBe("1311768467294899695");
    expect(tsidSegment("S2C.42")).toBe("42");
    expect(tsidSegment("C2C")).toBeUndefined();
    expect(tsidSegment("C2C.x1.2.3")).toBeUndefined();
    expect(tsidSegment("C2C..2.3")).toBeUndefined();
  });
});
