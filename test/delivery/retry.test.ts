import { describe, expect, test } from "bun:test";
import { Outbound } from "../../src/delivery/ports.ts";
import { RETRY_SCHEDULE, RetryWheel, type RetryEntry } from "../../src/delivery/retry.ts";

/** A wheel on a fake clock whose attempts are recorded (every device is still connected). */
function rig() {
  let clock = 1_000_000;
  const attempts: string[] = [];
  const wheel = new RetryWheel((e: RetryEntry) => (attempts.push(`${e.deviceId} ${e.out.msg.id}`), true), () => clock, 100);
  const push = (deviceId: string, id: string, userId = 1n) =>
    wheel.track({ userId, deviceId, out: new Outbound({ id, type: "C2C", from: 2n, to: userId, payload: {}, server_ts: clock }), schedule: RETRY_SCHEDULE.C2C });
  const after = (ms: number) => {
    clock += ms;
    wheel.advance();
  };
  return { wheel, attempts, push, after };
}

describe("RetryWheel", () => {
  test("an acknowledged push leaves its slot at once; the others keep their order", () => {
    const r = rig();
    for (const id of ["m1", "m2", "m3", "m4"]) r.push("d", id);
    expect(r.wheel.scheduled).toBe(4);
    r.wheel.cancel(r.wheel.find(1n, "d", "m2")!);
    r.wheel.cancel(r.wheel.find(1n, "d", "m4")!);
    expect(r.wheel.scheduled).toBe(2); // m2 and m4 (their messages, encodings, payload bytes) are not held until 3 s on
    r.after(RETRY_SCHEDULE.C2C[1]! + 100);
    expect(r.attempts).toEqual(["d m1", "d m3"]);
    expect(r.wheel.scheduled).toBe(0); // C2C's last attempt made
  });

  test("an entry that ends unacknowledged is handed on; an acknowledged one is not", () => {
    let clock = 0;
    const reachable = new Set(["a", "b", "c"]);
    const ended: string[] = [];
    const wheel = new RetryWheel((e) => reachable.has(e.deviceId), () => clock, 100, (e) => ended.push(`${e.deviceId} ${e.out.msg.id}`));
    const push = (deviceId: string, id: string, schedule: readonly number[]) =>
      wheel.track({ userId: 1n, deviceId, out: new Outbound({ id, type: "C2C", from: 2n, to: 1n, payload: {}, server_ts: 0 }), schedule });
    push("a", "acked", RETRY_SCHEDULE.C2C);
    push("a", "last", RETRY_SCHEDULE.C2C);
    push("b", "gone", RETRY_SCHEDULE.S2C);
    push("c", "closed", RETRY_SCHEDULE.C2C);
    push("c", "once", [0]); // no further attempt: never an entry, nothing to hand on
    wheel.cancel(wheel.find(1n, "a", "acked")!);
    wheel.cancelDevice(1n, "c"); // its disconnect
    expect(ended).toEqual(["c closed"]);
    reachable.delete("b"); // no session for its next attempt
    clock += RETRY_SCHEDULE.C2C[1]! + 100; // C2C's last attempt, S2C's second
    wheel.advance();
    expect(ended.sort()).toEqual(["a last", "b gone", "c closed"]);
    expect(wheel.size).toBe(0);
  });

  test("a device's disconnect and a push of the same id again empty their places too", () => {
    const r = rig();
    r.push("a", "m1");
    r.push("b", "m1");
    r.push("b", "m2");
    r.wheel.cancelDevice(1n, "b");
    expect(r.wheel.scheduled).toBe(1);
    r.push("a", "m1"); // pushed again (a retry of the store's pending): the earlier entry goes
    expect(r.wheel.scheduled).toBe(1);
    r.after(RETRY_SCHEDULE.C2C[1]! + 100);
    expect(r.attempts).toEqual(["a m1"]);
  });

  test("an entry cancelled while its slot fires is not attempted, and the rest are", () => {
    let now = 0;
    const attempts: string[] = [];
    const wheel: RetryWheel = new RetryWheel(
      (e) => {
        attempts.push(e.out.msg.id);
        // The device acknowledges the second message while the first one's retry is being sent.
        const other = wheel.find(1n, "d", "m2");
        if (other) wheel.cancel(other);
        return true;
      },
      () => now,
      100,
    );
    const out = (id: string) => new Outbound({ id, type: "S2C", from: null, to: 1n, payload: {}, server_ts: 0 });
    for (const id of ["m1", "m2", "m3"]) wheel.track({ userId: 1n, deviceId: "d", out: out(id), schedule: RETRY_SCHEDULE.S2C });
    now += RETRY_SCHEDULE.S2C[1]! + 100;
    wheel.advance();
    expect(attempts).toEqual(["m1", "m3"]);
    expect(wheel.scheduled).toBe(2); // m1 and m3 wait for their next attempt
  });
});
