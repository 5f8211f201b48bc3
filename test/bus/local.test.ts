import { expect, test } from "bun:test";
import { deliverLocally } from "../../src/bus/local.ts";
import { encodeBusMessage } from "../../src/bus/message.ts";
import type { Outbound, SendOutcome, Session, SessionRegistry } from "../../src/delivery/ports.ts";

/** A session that records what it was sent (the transport's sessions implement the same interface). */
class RecordingSession implements Session {
  readonly got: Outbound[] = [];
  constructor(
    readonly userId: bigint,
    readonly deviceId: string,
    readonly connId: number,
    private readonly outcome: SendOutcome = "sent",
  ) {}
  readonly deviceType = "web";
  readonly openedAt = 0;
  send(out: Outbound): SendOutcome {
    this.got.push(out);
    return this.outcome;
  }
  close(): void {}
}

function registry(all: RecordingSession[]): SessionRegistry {
  return {
    sessionsOf: (u) => all.filter((s) => s.userId === u),
    session: (u, d) => all.find((s) => s.userId === u && s.deviceId === d),
  };
}

test("one decode and one Outbound for every target session; device targets reach that device only", () => {
  const s = [
    new RecordingSession(1n, "a", 1),
    new RecordingSession(1n, "b", 2, "queued"),
    new RecordingSession(2n, "a", 3),
    new RecordingSession(2n, "b", 4),
    new RecordingSession(3n, "a", 5),
  ];
  const message = encodeBusMessage({ id: "C2G.1.2.x", type: "C2G", from: 9n, to: 77n, payload: { text: "hi" }, msg_type: "text", server_ts: 3 });
  const { out, sent } = deliverLocally(
    { kind: "deliver", targets: [{ userId: 1n }, { userId: 2n, deviceId: "b" }, { userId: 4n }, { userId: 2n, deviceId: "zz" }], message },
    registry(s),
  );
  expect(sent.map(([x, o]) => [x.connId, o])).toEqual([
    [1, "sent"],
    [2, "queued"],
    [4, "sent"],
  ]);
  for (const x of [s[0]!, s[1]!, s[3]!]) expect(x.got).toEqual([out]);
  expect(s[2]!.got).toHaveLength(0);
  expect(s[4]!.got).toHaveLength(0);
  expect(out.msg.payloadJson).toBe('{"text":"hi"}');
  expect(out.msg.to).toBe(77n);
});
