import { describe, expect, test } from "bun:test";
import { decodeBusDelivery, decodeBusMessage, encodeBusMessage } from "../../src/bus/message.ts";
import type { ImMessage } from "../../src/delivery/ports.ts";
import { LARGE_PAYLOAD_CHARS } from "../../src/protocol/json.ts";

describe("bus message bytes", () => {
  test("a large payload held as bytes is copied in as those bytes, and arrives held as bytes", () => {
    const payloadJson = `{"text":"${"é✓".repeat(LARGE_PAYLOAD_CHARS)}"}`;
    const msg: ImMessage = { id: "C2C.1.2.r", type: "C2C", from: 3n, to: 4n, payload: undefined, payloadJson, msg_type: "text", server_ts: 5 };
    const held = { ...msg, payloadUtf8: new TextEncoder().encode(payloadJson) };
    const bytes = encodeBusMessage(held);
    expect(bytes).toEqual(encodeBusMessage(msg));
    // Bytes unlike the text (never so outside this test) show that the held bytes are what is copied in.
    const other = `{"text":"${"b".repeat(LARGE_PAYLOAD_CHARS)}"}`;
    expect(decodeBusMessage(encodeBusMessage({ ...msg, payloadUtf8: new TextEncoder().encode(other) })).payloadJson).toBe(other);
    const back = decodeBusMessage(bytes);
    expect(Object.getOwnPropertyDescriptor(back, "payloadJson")!.get).toBeDefined(); // its text made only if asked for
    expect(encodeBusMessage(back)).toEqual(bytes); // passed on as bytes: still not made
    expect(Object.getOwnPropertyDescriptor(back, "payloadJson")!.get).toBeDefined();
    expect(back.payloadJson).toBe(payloadJson);
    expect(back.payloadUtf8?.buffer).toBe(bytes.buffer); // a view, no copy
    expect(back.payloadUtf8).toEqual(held.payloadUtf8);
    back.payload = { text: "changed" }; // neither text nor bytes describe it any more
    expect([back.payloadJson, back.payloadUtf8]).toEqual([undefined, undefined]);
  });

  test("an S2C with empty from, e2ee-free, payload without payloadJson round-trips", () => {
    const msg: ImMessage = {
      id: "S2C.1.2.r",
      type: "S2C",
      from: null,
      to: 9_007_199_254_740_993n,
      payload: { content: "line\nbreak", n: 9_007_199_254_740_993n },
      action: "logged_another_device",
      server_ts: 5,
      in_reply_to: "C2C.9.9.9",
    };
    const back = decodeBusMessage(encodeBusMessage(msg));
    expect(back.from).toBeNull();
    expect(back.payloadJson).toBe('{"content":"line\\nbreak","n":9007199254740993}');
    expect(back.payload).toEqual(msg.payload);
    expect({ ...back, payload: undefined, payloadJson: undefined }).toEqual({ ...msg, payload: undefined, payloadJson: undefined });
  });

  test("an encrypted payload (a JSON string) and e2ee metadata survive", () => {
    const msg: ImMessage = {
      id: "C2C.1.2.r",
      type: "C2C",
      from: 1n,
      to: 2n,
      payload: "QUJD",
      payloadJson: '"QUJD"',
      msg_type: "text",
      created_at: "2026-01-01T00:00:00Z",
      server_ts: 5,
      e2ee: { e2ee: true, e2ee_ver: 1, e2ee_suite: "RSA-OAEP-256+AES-256-GCM", nonce: "bm9uY2U=", keys: [{ did: "d", wrap_alg: "RSA-OAEP-256", ek: "ZWs=" }] },
    };
    const back = decodeBusMessage(encodeBusMessage(msg));
    expect(back.payload).toBe("QUJD");
    expect(back.e2ee).toEqual(msg.e2ee!);
    expect(back.created_at).toBe("2026-01-01T00:00:00Z");
  });

  test("assigning payload drops the stale payloadJson", () => {
    const back = decodeBusMessage(encodeBusMessage({ id: "x", type: "C2C", from: 1n, to: 2n, payload: {}, server_ts: 1 }));
    back.payload = { a: 1 };
    expect(back.payloadJson).toBeUndefined();
  });

  test("the server id travels exactly when given, and is absent otherwise", () => {
    const m = { id: "x", type: "C2C", from: 1n, to: 2n, payload: {}, server_ts: 1 };
    expect(decodeBusDelivery(encodeBusMessage(m, 9007199254740993123n)).serverId).toBe(9007199254740993123n);
    expect(decodeBusDelivery(encodeBusMessage(m)).serverId).toBeUndefined();
  });

  test("bytes without a header are refused", () => {
    expect(() => decodeBusMessage(new TextEncoder().encode("{}"))).toThrow();
  });
});
