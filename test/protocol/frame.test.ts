import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
  ACK_DIRECTION_CHAT,
  AckDirection,
  type AckDirectionValue,
  CHAT_ACK_DIRECTION,
  DOWNLINK_FRAME_TYPES,
  FRAME_HEADER_SIZE,
  FrameType,
  MAX_FRAME_PAYLOAD,
  SMALL_ARRAY,
  ackDirectionOf,
  ackFrame,
  decodeFrame,
  decodeUplinkFrame,
  encodeFrame,
  errorFrame,
  isAckRequested,
  isCompressed,
  isEncrypted,
  makeFlags,
  nackFrame,
  pingFrame,
  pongForPing,
  pongFrame,
  priorityOf,
  readSeq,
  readU64,
  writeFrameHeader,
} from "../../src/protocol/frame.ts";

const hex = (s: string) => Uint8Array.from(s.trim().split(/\s+/), (b) => parseInt(b, 16));
const header = (type: number, len: number, flags = 0, magic = 0x4942, version = 2) => {
  const h = new Uint8Array(9);
  writeFrameHeader(h, 0, type, flags, 0);
  h[0] = magic >> 8;
  h[1] = magic & 0xff;
  h[2] = version;
  new DataView(h.buffer).setUint32(5, len);
  return h;
};
const concat = (a: Uint8Array, b: Uint8Array) => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

describe("spec byte samples (§4.5)", () => {
  test("ping with Seq 7", () => {
    const sample = hex("49 42 02 27 01 00 00 00 02 00 07");
    expect(pingFrame(7)).toEqual(sample);
    const f = decodeFrame(sample);
    expect(f).toEqual({ ok: true, flags: 0x27, type: FrameType.HeartbeatPing, payload: hex("00 07") });
    if (!f.ok) throw new Error("unreachable");
    expect(readSeq(f.payload)).toBe(7);
    expect(isAckRequested(f.flags)).toBe(true);
    expect(priorityOf(f.flags)).toBe(7);
  });

  test("ack with id 0x1234567890ABCDEF", () => {
    const sample = hex("49 42 02 00 03 00 00 00 08 12 34 56 78 90 AB CD EF");
    expect(ackFrame(0x1234567890abcdefn, AckDirection.c2c)).toEqual(sample);
    const f = decodeFrame(sample);
    if (!f.ok) throw new Error(f.reason);
    expect(f.type).toBe(FrameType.Ack);
    expect(readU64(f.payload)).toBe(0x1234567890abcdefn);
    expect(ACK_DIRECTION_CHAT[ackDirectionOf(f.flags)]).toBe("C2C");
  });
});

describe("decodeFrame errors and check order", () => {
  const cases: [string, Uint8Array, string][] = [
    ["empty message", new Uint8Array(0), "payload_decode_failed"],
    ["short message, good magic", hex("49 42"), "payload_decode_failed"],
    ["short message, good magic and version", hex("49 42 02 00 01"), "payload_decode_failed"],
    ["short message, bad first byte", hex("7b"), "bad_magic"],
    ["short message, bad magic", hex("7b 22 69 64"), "bad_magic"],
    ["short message, bad version", hex("49 42 01 00"), "unsupported_version"],
    ["bad magic", concat(header(1, 2, 0, 0x4243), hex("00 07")), "bad_magic"],
    ["bad magic beats bad version", concat(header(1, 2, 0, 0x0000, 9), hex("00 07")), "bad_magic"],
    ["version 1", concat(header(1, 2, 0, 0x4942, 1), hex("00 07")), "unsupported_version"],
    ["version beats length", header(1, MAX_FRAME_PAYLOAD + 1, 0, 0x4942, 3), "unsupported_version"],
    ["declared 16 MiB + 1, header only", header(0x20, MAX_FRAME_PAYLOAD + 1), "frame_too_large"],
    ["declared 0xFFFFFFFF", header(0x20, 0xffffffff), "frame_too_large"],
    ["too large beats unknown type", header(0x99, MAX_FRAME_PAYLOAD + 1), "frame_too_large"],
    ["declared 16 MiB, header only", header(0x20, MAX_FRAME_PAYLOAD), "payload_decode_failed"],
    ["declared 3, 2 arrived", concat(header(1, 3), hex("00 07")), "payload_decode_failed"],
    ["declared 1, 2 arrived", concat(header(1, 1), hex("00 07")), "payload_decode_failed"],
    ["length beats unknown type", concat(header(0x99, 5), hex("00")), "payload_decode_failed"],
    ["close (reserved)", header(FrameType.Close, 0), "unsupported_frame_type:5"],
    ["error frame uplink", header(FrameType.Error, 0), "unsupported_frame_type:6"],
    ["handshake hello", header(FrameType.HandshakeHello, 0), "unsupported_frame_type:16"],
    ["msg sync", header(FrameType.MsgSync, 0), "unsupported_frame_type:36"],
    ["msg recall", header(FrameType.MsgRecall, 0), "unsupported_frame_type:39"],
    ["rpc req", header(FrameType.RpcReq, 0), "unsupported_frame_type:128"],
    ["type 0", header(0, 0), "unsupported_frame_type:0"],
    ["type 255", header(255, 0), "unsupported_frame_type:255"],
  ];
  for (const [name, bytes, reason] of cases) {
    test(`${name} → ${reason}`, () => {
      expect(decodeFrame(bytes)).toEqual({ ok: false, reason: reason as never });
    });
  }

  test("every uplink type is accepted, every other is unsupported with its decimal number", () => {
    const uplink = new Set<number>([0x01, 0x02, 0x03, 0x04, 0x20, 0x21, 0x22, 0x23]);
    for (let t = 0; t < 256; t++) {
      const r = decodeFrame(header(t, 0));
      if (uplink.has(t)) expect(r.ok).toBe(true);
      else expect(r).toEqual({ ok: false, reason: `unsupported_frame_type:${t}` });
    }
  });

  test("downlink set accepts ERROR and refuses ACK", () => {
    expect(decodeFrame(errorFrame("bad_magic"), DOWNLINK_FRAME_TYPES).ok).toBe(true);
    expect(decodeFrame(ackFrame(1n, 0), DOWNLINK_FRAME_TYPES)).toEqual({ ok: false, reason: "unsupported_frame_type:3" });
  });
});

describe("sizes and views", () => {
  test("a full 16 MiB payload frame round-trips, payload a view of the input", () => {
    const payload = new Uint8Array(MAX_FRAME_PAYLOAD);
    payload[0] = 1;
    payload[MAX_FRAME_PAYLOAD - 1] = 2;
    const frame = encodeFrame(FrameType.MsgC2C, payload);
    expect(frame.length).toBe(MAX_FRAME_PAYLOAD + FRAME_HEADER_SIZE);
    const f = decodeFrame(frame);
    if (!f.ok) throw new Error(f.reason);
    expect(f.payload.length).toBe(MAX_FRAME_PAYLOAD);
    expect(f.payload.buffer).toBe(frame.buffer);
    expect(f.payload.byteOffset).toBe(FRAME_HEADER_SIZE);
    expect(f.payload[MAX_FRAME_PAYLOAD - 1]).toBe(2);
  });

  test("16 MiB + 1 payload is refused by the encoder", () => {
    expect(() => encodeFrame(FrameType.MsgC2C, new Uint8Array(MAX_FRAME_PAYLOAD + 1))).toThrow(RangeError);
  });

  test("declared 16 MiB + 1 with every byte present → frame_too_large", () => {
    const bytes = new Uint8Array(FRAME_HEADER_SIZE + MAX_FRAME_PAYLOAD + 1);
    bytes.set(header(FrameType.MsgC2C, MAX_FRAME_PAYLOAD + 1));
    expect(decodeFrame(bytes)).toEqual({ ok: false, reason: "frame_too_large" });
  });

  test("decoding a frame inside a larger buffer (non-zero byteOffset) keeps the view", () => {
    const backing = new Uint8Array(100);
    const frame = encodeFrame(FrameType.MsgC2S, hex("01 02 03"));
    backing.set(frame, 40);
    const view = backing.subarray(40, 40 + frame.length);
    const f = decodeFrame(view);
    if (!f.ok) throw new Error(f.reason);
    expect(f.payload.buffer).toBe(backing.buffer);
    expect(f.payload.byteOffset).toBe(49);
    expect([...f.payload]).toEqual([1, 2, 3]);
  });

  test("the server's decode: a frame of at most SMALL_ARRAY bytes hands on a copy of its payload; one byte more, a view", () => {
    for (const [size, view] of [[0, false], [3, false], [256, false], [257, false], [SMALL_ARRAY - FRAME_HEADER_SIZE, false], [SMALL_ARRAY - FRAME_HEADER_SIZE + 1, true]] as const) {
      const payload = Uint8Array.from({ length: size }, (_, i) => (i * 7) & 0xff);
      const frame = encodeFrame(FrameType.MsgC2C, payload);
      const f = decodeUplinkFrame(frame);
      if (!f.ok) throw new Error(f.reason);
      expect([size, f.payload.buffer === frame.buffer]).toEqual([size, view]);
      expect(f.payload).toEqual(payload);
      frame.fill(0xee, FRAME_HEADER_SIZE); // the received bytes reused: a copy keeps what arrived
      expect(f.payload.every((b, i) => b === (view ? 0xee : payload[i]))).toBe(true);
    }
  });

  test("writeFrameHeader at an offset", () => {
    const buf = new Uint8Array(20);
    writeFrameHeader(buf, 5, FrameType.MsgS2C, 0x03, 0x00fedcba);
    expect([...buf.subarray(5, 14)]).toEqual([0x49, 0x42, 2, 0x03, 0x23, 0x00, 0xfe, 0xdc, 0xba]);
    expect(() => writeFrameHeader(buf, 0, 1, 0, -1)).toThrow(RangeError);
  });
});

describe("flags", () => {
  test("makeFlags / accessors round trip over every field combination", () => {
    for (const compressed of [false, true])
      for (const encrypted of [false, true])
        for (const ackRequested of [false, true])
          for (const ackDirection of [0, 1, 2, 3] as AckDirectionValue[])
            for (let priority = 0; priority < 8; priority++) {
              const f = makeFlags({ compressed, encrypted, ackRequested, ackDirection, priority });
              expect(f).toBeLessThan(256);
              expect([isCompressed(f), isEncrypted(f), isAckRequested(f), ackDirectionOf(f), priorityOf(f)]).toEqual([
                compressed,
                encrypted,
                ackRequested,
                ackDirection,
                priority,
              ]);
            }
  });

  test("bit positions", () => {
    expect(makeFlags({ compressed: true })).toBe(0x80);
    expect(makeFlags({ encrypted: true })).toBe(0x40);
    expect(makeFlags({ ackRequested: true })).toBe(0x20);
    expect(makeFlags({ ackDirection: 3 })).toBe(0x18);
    expect(makeFlags({ ackDirection: 2 })).toBe(0x10);
    expect(makeFlags({ priority: 7 })).toBe(0x07);
    expect(makeFlags({})).toBe(0);
  });

  test("ack direction ↔ chat type", () => {
    for (const [name, v] of Object.entries(AckDirection)) {
      expect(ACK_DIRECTION_CHAT[v]).toBe(name.toUpperCase() as never);
      expect(CHAT_ACK_DIRECTION[ACK_DIRECTION_CHAT[v]]).toBe(v);
      const f = decodeFrame(ackFrame(42n, v));
      if (!f.ok) throw new Error(f.reason);
      expect(ackDirectionOf(f.flags)).toBe(v);
    }
  });
});

describe("control frames", () => {
  test("pong echoes Seq with priority 7, Seq wraps at uint16", () => {
    expect(pongFrame(7)).toEqual(hex("49 42 02 07 02 00 00 00 02 00 07"));
    expect(pingFrame(65535).subarray(9)).toEqual(hex("ff ff"));
    expect(pingFrame(65536).subarray(9)).toEqual(hex("00 00"));
  });

  test("error frame carries the UTF-8 reason", () => {
    const f = decodeFrame(errorFrame("unsupported_frame_type:5"), DOWNLINK_FRAME_TYPES);
    if (!f.ok) throw new Error(f.reason);
    expect(f.type).toBe(FrameType.Error);
    expect(new TextDecoder().decode(f.payload)).toBe("unsupported_frame_type:5");
  });

  test("nack and uint64 limits", () => {
    const max = (1n << 64n) - 1n;
    const f = decodeFrame(nackFrame(max));
    if (!f.ok) throw new Error(f.reason);
    expect(f.type).toBe(FrameType.Nack);
    expect(readU64(f.payload)).toBe(max);
    expect(() => ackFrame(-1n, 0)).toThrow(RangeError);
    expect(() => nackFrame(max + 1n)).toThrow(RangeError);
  });

  test("readSeq / readU64 need exact lengths", () => {
    expect(readSeq(hex("00"))).toBeUndefined();
    expect(readSeq(hex("00 01 02"))).toBeUndefined();
    expect(readSeq(hex("ff fe"))).toBe(0xfffe);
    expect(readU64(hex("00 00 00 00 00 00 01"))).toBeUndefined();
    expect(readU64(hex("00 00 00 00 00 00 00 01 00"))).toBeUndefined();
    expect(readU64(hex("80 00 00 00 00 00 00 01"))).toBe(0x8000000000000001n);
  });
});

describe("properties", () => {
  const uplinkTypes = [0x01, 0x02, 0x03, 0x04, 0x20, 0x21, 0x22, 0x23];

  test("decode(encode(f)) = f", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...uplinkTypes),
        fc.integer({ min: 0, max: 255 }),
        fc.uint8Array({ maxLength: 2048 }),
        (type, flags, payload) => {
          const frame = encodeFrame(type, payload, flags);
          const f = decodeFrame(frame);
          expect(f).toEqual({ ok: true, flags, type, payload });
          if (f.ok) expect(f.payload.buffer).toBe(frame.buffer);
          const u = decodeUplinkFrame(frame); // the server's: the same answer, a copy up to SMALL_ARRAY bytes
          expect(u).toEqual(f);
          if (u.ok) expect(u.payload.buffer === frame.buffer).toBe(frame.length > SMALL_ARRAY);
        },
      ),
      { numRuns: 500 },
    );
  });

  test("random bytes never throw and always give a known result", () => {
    const reasons = /^(bad_magic|unsupported_version|frame_too_large|payload_decode_failed|unsupported_frame_type:\d{1,3})$/;
    const check = (bytes: Uint8Array) => {
      const r = decodeFrame(bytes);
      if (r.ok) {
        expect(r.payload.length).toBe(bytes.length - FRAME_HEADER_SIZE);
      } else {
        expect(r.reason).toMatch(reasons);
      }
    };
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), check), { numRuns: 2000 });
    // Bytes behind a valid magic/version reach the length and type checks.
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (tail) => check(concat(hex("49 42 02"), tail))),
      { numRuns: 2000 },
    );
  });
});

describe("pongForPing (the heartbeat's hot path)", () => {
  test("the spec's ping sample (Seq 7) gives the same bytes as pongFrame(7), in the reused buffer", () => {
    const into = new Uint8Array(11);
    const out = pongForPing(hex("49 42 02 27 01 00 00 00 02 00 07"), into);
    expect(out).toBe(into);
    expect([...out!]).toEqual([...pongFrame(7)]);
    expect([...pongForPing(pingFrame(0xfffe), into)!]).toEqual([...pongFrame(0xfffe)]);
  });

  test("anything but one well-formed ping is left to the full decoder", () => {
    const into = new Uint8Array(11);
    for (const bad of [
      "49 42 02 27 01 00 00 00 02 00", // short
      "49 42 02 27 01 00 00 00 03 00 07 00", // length 3
      "49 42 03 27 01 00 00 00 02 00 07", // version 3
      "49 43 02 27 01 00 00 00 02 00 07", // magic
      "49 42 02 27 02 00 00 00 02 00 07", // a pong, not a ping
      "49 42 02 00 03 00 00 00 02 00 07", // an ACK header with a 2-byte payload
    ]) {
      expect(pongForPing(hex(bad), into)).toBeUndefined();
    }
  });
});
