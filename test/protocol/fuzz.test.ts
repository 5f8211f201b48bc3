/**
 * Fuzzing of every decoder a client's bytes reach before validation (issue
 * 14): the svc.v2 frame decoder, the lenient JSON/protobuf message decode, the
 * ack parsers, the id hints and the §2.8 validation after them. None may
 * throw, whatever the input. Seeded (IBIS_FUZZ_SEED) so CI is repeatable;
 * IBIS_FUZZ_RUNS raises the count for a long run (docs/reliability.md).
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { validateUplink } from "../../src/delivery/validate.ts";
import { decodeFrame, encodeFrame, FrameType } from "../../src/protocol/frame.ts";
import { decodeUplinkBytes, parseJsonSharing } from "../../src/protocol/json-sharing.ts";
import { messageJson, messageProto } from "../../src/protocol/message.ts";
import {
  decodeAck,
  decodeAckText,
  decodeMessageBytes,
  decodeMessageText,
  frameAckToClientAck,
  messageIdInBytes,
  messageIdInText,
} from "../../src/protocol/uplink.ts";

export const FUZZ = { seed: Number(process.env.IBIS_FUZZ_SEED ?? 1414), numRuns: Number(process.env.IBIS_FUZZ_RUNS ?? 2000) };

/** Every decode step a binary uplink can take, then validation of what came out. */
function throughEverything(bytes: Uint8Array): void {
  const f = decodeFrame(bytes);
  if (f.ok) {
    frameAckToClientAck(f.payload, f.flags, "d");
    decodeAck(f.payload);
    const raw = decodeMessageBytes(f.payload);
    if (raw) validateUplink(raw, 1n, 0);
    messageIdInBytes(f.payload);
  }
  decodeAck(bytes);
  const raw = decodeMessageBytes(bytes);
  if (raw) validateUplink(raw, 1n, 0);
  messageIdInBytes(bytes);
}

function throughText(text: string): void {
  decodeAckText(text);
  const r = decodeMessageText(text);
  if (r.ok) validateUplink(r.raw, 1n, 0);
  messageIdInText(text);
}

// Near-valid inputs find more than random bytes: real messages, then mutated.
const message = fc.record({
  id: fc.oneof(fc.string(), fc.constant("C2C.1.2.abc")),
  type: fc.constantFrom("C2C", "C2G", "C2S", "S2C"), // what the encoder can write; mutations make the rest
  from: fc.oneof(fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), fc.constant(1n)), // sint64: what the encoder can write
  to: fc.bigInt({ min: 0n, max: (1n << 63n) - 1n }),
  msg_type: fc.constantFrom("text", "image", "custom"),
  payload: fc.dictionary(fc.string(), fc.jsonValue()),
  server_ts: fc.integer(),
});

const mutate = (bytes: Uint8Array, edits: [number, number][]) => {
  const out = bytes.slice();
  for (const [at, v] of edits) if (out.length) out[at % out.length] = v;
  return out;
};

describe("fuzz: uplink decoders never throw", () => {
  test("random bytes, bare and inside a valid frame header", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 256 }), fc.constantFrom(...Object.values(FrameType)), fc.integer({ min: 0, max: 255 }), (bytes, type, flags) => {
        throughEverything(bytes);
        throughEverything(encodeFrame(type, bytes, flags));
      }),
      FUZZ,
    );
  });

  test("real messages (protobuf and JSON), mutated byte by byte", () => {
    const edits = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 8 });
    fc.assert(
      fc.property(message, edits, (m, e) => {
        const pb = messageProto(m as never);
        const json = new TextEncoder().encode(messageJson(m as never));
        for (const b of [pb, json]) {
          throughEverything(mutate(b, e));
          throughEverything(mutate(encodeFrame(FrameType.MsgC2C, b), e));
        }
      }),
      FUZZ,
    );
  });

  test("large messages, mutated: the server's in-place read answers as the text decode does, and never throws", () => {
    // Long strings (what the server leaves in the bytes) with edits where they matter most: quotes, backslashes,
    // control bytes, bytes of multi-byte characters, at their edges and inside.
    const long = fc.constantFrom("x".repeat(40_000), "水".repeat(14_000), `-${"7".repeat(40_000)}`, "a😀".repeat(9_000));
    const payload = fc.record({ text: long, more: fc.array(fc.oneof(long, fc.jsonValue({ maxDepth: 1 })), { maxLength: 3 }) });
    const at = fc.oneof(fc.nat({ max: 80 }), fc.nat());
    const edits = fc.array(fc.tuple(at, fc.constantFrom(0x22, 0x5c, 0x00, 0x1f, 0x7b, 0x7d, 0x3a, 0x80, 0xbf, 0xc0, 0xed, 0xf0, 0xff, 0x20)), { maxLength: 4 });
    const plain = (v: unknown): unknown => (v === undefined ? undefined : structuredClone(v));
    fc.assert(
      fc.property(message, payload, edits, fc.boolean(), (m, p, e, asProto) => {
        const msg = { ...m, payload: p } as never;
        const bytes = mutate(asProto ? messageProto(msg) : new TextEncoder().encode(messageJson(msg)), e);
        const inPlace = decodeUplinkBytes(bytes);
        expect(plain(inPlace)).toEqual(plain(decodeMessageBytes(bytes, parseJsonSharing)));
        if (inPlace) validateUplink(inPlace, 1n, 0);
      }),
      { ...FUZZ, numRuns: Math.max(100, Math.floor(FUZZ.numRuns / 4)) },
    );
  }, 60_000);

  test("text frames: random strings, JSON values, CLIENT_ACK lookalikes", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.json(), fc.string().map((s) => `CLIENT_ACK,${s}`), message.map((m) => messageJson(m as never))),
        (text) => {
          throughText(text);
        },
      ),
      FUZZ,
    );
    expect(true).toBe(true);
  });
});
