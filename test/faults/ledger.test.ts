import { describe, expect, test } from "bun:test";
import { Ledger } from "./ledger.ts";

const d = (userId: bigint, deviceId = "d") => ({ userId, deviceId, token: "" });

describe("fault ledger (the books the fault suites judge by)", () => {
  test("an acked message some recipient device never got is lost; repeats are duplicates; unacked ones do not count", () => {
    const l = new Ledger();
    l.sent("m1", [d(1n), d(2n)]);
    l.sent("m2", [d(1n)]);
    l.sent("m3", [d(2n)]); // never acked: the sender may resend it, its fate is not the server's promise
    l.acked.add("m1");
    l.acked.add("m2");
    l.received(d(1n), "m1");
    l.received(d(1n), "m1"); // pushed, then pulled again
    l.received(d(1n), "m2");
    expect(l.report()).toMatchObject({ acked: 2, lost: 1, duplicated: 1 });
    expect(l.missing()).toEqual([{ id: "m1", device: "2/d" }]);
    l.received(d(2n), "m1");
    expect(l.report()).toMatchObject({ lost: 0, duplicated: 1 });
  });
});
