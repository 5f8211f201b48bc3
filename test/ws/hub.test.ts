import { describe, expect, test } from "bun:test";
import { Conn, type ConnContext } from "../../src/ws/conn.ts";
import { Hub } from "../../src/ws/hub.ts";
import { Proto } from "../../src/ws/negotiate.ts";

const ctx: ConnContext = { onSlowConsumer() {} };
let ids = 0;
const conn = (userId: bigint, deviceId: string) => new Conn(++ids, { userId, deviceId, deviceType: "", expiresAt: 0, sessionDeviceId: deviceId, gen: 0 }, Proto.V2, ctx);

describe("Hub", () => {
  test("takeover, second device, removal", () => {
    const hub = new Hub();
    const a1 = conn(1n, "phone");
    expect(hub.add(a1)).toBeUndefined();
    const a2 = conn(1n, "phone");
    expect(hub.add(a2)).toBe(a1); // same device: takeover
    const b = conn(1n, "laptop");
    expect(hub.add(b)).toBeUndefined();
    expect(hub.size).toBe(2);
    expect(hub.sessionsOf(1n)).toEqual([a2, b]);
    expect(hub.remove(a1)).toBe(false); // replaced: not registered any more
    expect(hub.remove(a2)).toBe(true);
    expect(hub.session(1n, "laptop")).toBe(b);
    expect(hub.remove(b)).toBe(true);
    expect(hub.size).toBe(0);
    expect(hub.sessionsOf(1n)).toEqual([]);
  });
});
