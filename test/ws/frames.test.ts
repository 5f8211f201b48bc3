import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newMessageId, type IbisConnection } from "../../src/client/index.ts";
import type { ImMessage } from "../../src/delivery/ports.ts";
import { encodeFrame, FRAME_HEADER_SIZE, FrameType, makeFlags, MAX_FRAME_PAYLOAD, writeFrameHeader } from "../../src/protocol/frame.ts";
import { utf8 } from "../../src/protocol/json.ts";
import { messageJson, messageProto } from "../../src/protocol/message.ts";
import { CloseCode } from "../../src/ws/index.ts";
import type { TestNode } from "../support/node.ts";
import { c2c, connect, createUser, startWsNode, type TestUser } from "../support/ws.ts";
import type { RecordingEngine } from "../support/ws-engine.ts";

const hex = (s: string) => Uint8Array.from(s.split(/\s+/).filter(Boolean).map((b) => parseInt(b, 16)));
const isError = (reason: string) => (e: { kind: string; reason?: string }) => e.kind === "error" && e.reason === reason;

describe("svc.v2 frames over a real socket [pglite]", () => {
  let node: TestNode;
  let engine: RecordingEngine;
  let alice: TestUser;
  let c: IbisConnection;

  beforeAll(async () => {
    ({ node, engine } = await startWsNode("pglite", { throttleOff: true }));
    alice = await createUser(node, "alice-1");
    c = await connect(node, alice);
    expect(c.protocol).toBe("svc.v2");
  });
  afterAll(async () => {
    await c.close();
    await node.stop();
  });

  /** The connection still answers: a ping gets its pong. */
  async function stillUsable(seq = 4242) {
    c.ping(seq);
    expect(await c.next((e) => e.kind === "pong")).toEqual({ kind: "pong", seq });
  }

  test("spec byte sample: ping Seq 7 → pong echoing 7", async () => {
    c.sendRaw(hex("49 42 02 27 01 00 00 00 02 00 07"));
    expect(await c.next((e) => e.kind === "pong")).toEqual({ kind: "pong", seq: 7 });
  });

  test("spec byte sample: ACK 0x1234567890ABCDEF → client-ack (tsid only, did from the connection)", async () => {
    const before = engine.acks.length;
    c.sendRaw(hex("49 42 02 00 03 00 00 00 08 12 34 56 78 90 AB CD EF"));
    await c.nextAction("CLIENT_ACK_CONFIRM");
    expect(engine.acks.slice(before).map((a) => a.ack)).toEqual([
      { type: "C2C", msgId: BigInt("0x1234567890ABCDEF").toString(), did: "alice-1", tsidOnly: true },
    ]);
  });

  test("ACK direction comes from flags bits 4–3", async () => {
    const before = engine.acks.length;
    for (const dir of [1, 2, 3] as const) {
      const f = encodeFrame(FrameType.Ack, hex("00 00 00 00 00 00 00 2a"), makeFlags({ ackDirection: dir }));
      c.sendRaw(f);
      await c.nextAction("CLIENT_ACK_CONFIRM");
    }
    expect(engine.acks.slice(before).map((a) => [a.ack.type, a.ack.msgId])).toEqual([
      ["C2G", "42"],
      ["S2C", "42"],
      ["C2S", "42"],
    ]);
  });

  test("ping/pong Seq at the wrap: 65535 then 0", async () => {
    c.ping(65535);
    expect(await c.next((e) => e.kind === "pong")).toEqual({ kind: "pong", seq: 65535 });
    c.ping(0);
    expect(await c.next((e) => e.kind === "pong")).toEqual({ kind: "pong", seq: 0 });
  });

  test("server heartbeat pings carry consecutive Seq and the SDK answers them", async () => {
    const s1 = node.ws.heartbeat();
    const s2 = node.ws.heartbeat();
    expect(await c.next((e) => e.kind === "ping")).toEqual({ kind: "ping", seq: s1 });
    expect(await c.next((e) => e.kind === "ping")).toEqual({ kind: "ping", seq: s2 });
    expect(s2).toBe((s1 + 1) & 0xffff);
  });

  test("malformed ping is dropped (no answer, no error), the connection goes on", async () => {
    c.sendRaw(encodeFrame(FrameType.HeartbeatPing, hex("01")));
    await stillUsable(11);
    expect(c.pending.filter((e) => e.kind === "error")).toEqual([]);
  });

  const errorCases: [string, Uint8Array, string][] = [
    ["bad magic", hex("48 42 02 00 20 00 00 00 00"), "bad_magic"],
    ["JSON text sent as a binary frame", utf8('{"type":"C2C"}'), "bad_magic"],
    ["version 1", hex("49 42 01 00 20 00 00 00 00"), "unsupported_version"],
    ["declared length above 16 MiB, header only", hex("49 42 02 00 20 01 00 00 01"), "frame_too_large"],
    ["declared length ≠ bytes that arrived", hex("49 42 02 00 20 00 00 00 05 01 02"), "payload_decode_failed"],
    ["shorter than the header", hex("49 42 02 00"), "payload_decode_failed"],
    ["reserved type 0x05 (close)", hex("49 42 02 00 05 00 00 00 00"), "unsupported_frame_type:5"],
    ["RPC request 0x80", hex("49 42 02 00 80 00 00 00 00"), "unsupported_frame_type:128"],
    ["ERROR frame uplink", hex("49 42 02 00 06 00 00 00 00"), "unsupported_frame_type:6"],
    ["MSG payload neither JSON nor protobuf", encodeFrame(FrameType.MsgC2C, hex("ff ff ff ff")), "payload_decode_failed"],
    ["ACK with a 4-byte payload", encodeFrame(FrameType.Ack, hex("00 00 00 01")), "payload_decode_failed"],
    ["malformed CLIENT_ACK text", encodeFrame(FrameType.MsgC2S, utf8("CLIENT_ACK,C2C")), "payload_decode_failed"],
  ];
  for (const [name, bytes, reason] of errorCases) {
    test(`ERROR ${reason}: ${name}; the connection stays usable`, async () => {
      c.sendRaw(bytes);
      expect(await c.next((e) => e.kind === "error")).toEqual({ kind: "error", reason });
      await stillUsable();
    });
  }

  test("JSON and protobuf payloads inside MSG frames reach the engine and are acknowledged", async () => {
    const bob = 777n;
    const json = c2c(alice.userId, bob, "json");
    const pb = c2c(alice.userId, bob, "protobuf");
    const group: ImMessage = { ...c2c(alice.userId, 1234567890123456789n), id: newMessageId("C2G"), type: "C2G" };
    c.send(json, "json");
    c.send(pb, "protobuf");
    c.send(group, "protobuf");
    const acks = [await c.nextMessage((m) => m.in_reply_to === json.id), await c.nextMessage((m) => m.in_reply_to === pb.id)];
    expect(acks.map((m) => m.type)).toEqual(["C2C_SERVER_ACK", "C2C_SERVER_ACK"]);
    expect((await c.nextMessage((m) => m.in_reply_to === group.id)).type).toBe("C2G_SERVER_ACK");
    const got = engine.messages.filter((m) => [json.id, pb.id, group.id].includes(m.raw.id as string));
    expect(got.map((m) => m.raw.payload)).toEqual([{ text: "json" }, { text: "protobuf" }, { text: "hi" }]);
    expect(got[1]!.raw.to).toBe(bob);
    expect(got[2]!.raw.to).toBe(1234567890123456789n); // exact past 2^53
    expect(got.every((m) => m.session.userId === alice.userId && m.session.deviceId === "alice-1")).toBe(true);
  });

  test("CLIENT_ACK text and protobuf inside MSG_C2S reach the ack path", async () => {
    const before = engine.acks.length;
    c.ack({ type: "C2C", msgId: "C2C.123.456.abc" }, "text");
    await c.nextAction("CLIENT_ACK_CONFIRM");
    c.ack({ type: "S2C", msgId: "S2C.789.456.abc" }, "protobuf");
    await c.nextAction("CLIENT_ACK_CONFIRM");
    c.ack({ type: "C2G", msgId: "C2G.555.456.abc" }, "frame");
    await c.nextAction("CLIENT_ACK_CONFIRM");
    expect(engine.acks.slice(before).map((a) => a.ack)).toEqual([
      { type: "C2C", msgId: "C2C.123.456.abc", did: "alice-1" },
      { type: "S2C", msgId: "S2C.789.456.abc", did: "alice-1" },
      { type: "C2G", msgId: "555", did: "alice-1", tsidOnly: true },
    ]);
  });

  test("NACK is only logged", async () => {
    const before = [engine.acks.length, engine.messages.length];
    c.sendRaw(encodeFrame(FrameType.Nack, hex("00 00 00 00 00 00 00 01")));
    await stillUsable();
    expect([engine.acks.length, engine.messages.length]).toEqual(before);
  });

  test("a full 16 MiB payload frame is accepted; 16 MiB + 1 is refused with frame_too_large, connection open", async () => {
    const msg = c2c(alice.userId, 5n, "");
    const base = utf8(messageJson(msg)).length; // `"text":""` gets the padding
    const text = "a".repeat(MAX_FRAME_PAYLOAD - base);
    const body = utf8(messageJson({ ...msg, payload: { text } }));
    expect(body.length).toBe(MAX_FRAME_PAYLOAD);
    c.sendRaw(encodeFrame(FrameType.MsgC2C, body));
    expect((await c.nextMessage((m) => m.in_reply_to === msg.id, 20_000)).type).toBe("C2C_SERVER_ACK");
    expect((engine.messages.at(-1)!.raw.payload as { text: string }).text.length).toBe(text.length);

    const over = new Uint8Array(FRAME_HEADER_SIZE + MAX_FRAME_PAYLOAD + 1);
    over.set(body, FRAME_HEADER_SIZE);
    over.set(utf8("}"), FRAME_HEADER_SIZE + MAX_FRAME_PAYLOAD); // junk byte: the length check comes first
    writeFrameHeader(over, 0, FrameType.MsgC2C, 0, 0);
    over.set([0x01, 0x00, 0x00, 0x01], 5); // declared 16 MiB + 1 (encodeFrame refuses to build it)
    c.sendRaw(over);
    expect(await c.next(isError("frame_too_large"), 20_000)).toEqual({ kind: "error", reason: "frame_too_large" });
    await stillUsable();
  });

  test("large JSON messages reach the engine exactly on svc.v2 and svc-json: long plain strings, escaped ones; a bad one is still refused", async () => {
    // Large texts are parsed sharing their long plain strings (parseJsonSharing), large frames read in place (parseJsonBytesSharing).
    const payload = {
      text: "plain ".repeat(20_000),
      note: 'é\n"\\😀'.repeat(5_000),
      parts: ["p".repeat(9_000), { deep: "d".repeat(9_000), n: 1 }],
      [`k${"k".repeat(5_000)}`]: "key long, value short",
    };
    const ann = await createUser(node, "ann-1");
    const j = await connect(node, ann, { protocols: ["svc-json"] });
    try {
      const viaFrame = { ...c2c(alice.userId, 5n), payload };
      const viaText = { ...c2c(ann.userId, 5n), payload };
      c.send(viaFrame);
      j.send(viaText);
      expect((await c.nextMessage((m) => m.in_reply_to === viaFrame.id, 20_000)).type).toBe("C2C_SERVER_ACK");
      expect((await j.nextMessage((m) => m.in_reply_to === viaText.id, 20_000)).type).toBe("C2C_SERVER_ACK");
      // Read through (structuredClone): a long string the server left in the frame's bytes is an accessor member,
      // which bun's toEqual does not call inside arrays.
      for (const id of [viaFrame.id, viaText.id]) expect(structuredClone(engine.messages.find((m) => m.raw.id === id)!.raw.payload)).toEqual(payload);

      // A raw control character inside a long string: not JSON (nor protobuf) on svc.v2, invalid_json on svc-json.
      const bad = messageJson({ ...c2c(alice.userId, 5n), payload: { text: `${"x".repeat(70_000)}\u0001` } }).replace("\\u0001", "\u0001");
      c.sendRaw(encodeFrame(FrameType.MsgC2C, utf8(bad)));
      expect(await c.next(isError("payload_decode_failed"), 20_000)).toEqual({ kind: "error", reason: "payload_decode_failed" });
      j.sendRaw(bad.replace(`"from":${alice.userId}`, `"from":${ann.userId}`));
      expect((await j.nextAction("invalid_json")).payload).toMatchObject({ content: "message is not valid JSON" });
    } finally {
      await j.close();
    }
  });

  test("uplinks behind a large message (scanned a slice a turn) are handled in the order they arrived; pings are answered meanwhile", async () => {
    const large = (mib: number) => ({ ...c2c(alice.userId, 5n), payload: { text: "L".repeat(mib << 20), n: mib } });
    const [l1, l2, l3] = [large(3), large(2), large(2)];
    const [s1, s2, s3] = [c2c(alice.userId, 5n, "one"), c2c(alice.userId, 5n, "two"), c2c(alice.userId, 5n, "three")];
    const ack = encodeFrame(FrameType.Ack, hex("00 00 00 00 00 00 30 39"), makeFlags({ ackDirection: 1 }));
    const from = engine.log.length;
    c.sendRaw(encodeFrame(FrameType.MsgC2C, messageProto(l1))); // protobuf, its payload field read in place
    c.send(s1);
    c.sendRaw(ack);
    c.ping(77);
    c.sendRaw(encodeFrame(FrameType.MsgC2C, utf8(messageJson(l2)))); // JSON
    c.sendRaw(encodeFrame(FrameType.MsgC2C, utf8(messageJson(l3)))); // a second scan behind the first
    c.send(s2);
    c.send(s3);
    await c.nextMessage((m) => m.in_reply_to === s3.id, 20_000);
    expect(engine.log.slice(from)).toEqual([l1, s1].map((m) => `message ${m.id}`).concat(["ack 12345"], [l2, l3, s2, s3].map((m) => `message ${m.id}`)));
    for (const m of [l1, l2, l3]) expect((engine.messages.find((x) => x.raw.id === m.id)!.raw.payload as { text: string }).text).toBe(m.payload.text);
    expect(await c.next((e) => e.kind === "pong", 20_000)).toEqual({ kind: "pong", seq: 77 });
  });

  test("protobuf business message in MSG_C2S (not an ack) goes to the engine", async () => {
    const m: ImMessage = { id: newMessageId("C2S"), type: "C2S", from: alice.userId, to: 1000n, msg_type: "text", payload: { text: "bot?", topic_id: 1 }, server_ts: 0 };
    c.sendRaw(encodeFrame(FrameType.MsgC2S, messageProto(m)));
    expect((await c.nextMessage((x) => x.in_reply_to === m.id)).type).toBe("C2S_SERVER_ACK");
  });
});

describe("past the WebSocket limit [pglite]", () => {
  test("a message above IBIS_WS_MAX_PAYLOAD is closed by Bun with 1009", async () => {
    const { node } = await startWsNode("pglite");
    const u = await createUser(node, "big");
    const c = await connect(node, u);
    c.sendRaw(new Uint8Array(node.services.config.wsMaxPayload + 1));
    expect((await c.closed).code).toBe(CloseCode.TooBig);
    await node.stop();
  });
});
