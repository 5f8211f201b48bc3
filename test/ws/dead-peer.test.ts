import { describe, expect, test } from "bun:test";
import { createUser, rawHandshake, startWsNode } from "../support/ws.ts";

// A peer that stops answering (no pong, no data) is closed by the transport ping
// (Bun's idleTimeout + sendPings, 8 s being Bun's minimum) and leaves the registry,
// so the engine hears onClose and presence is cleared.
describe("dead peer [pglite]", () => {
  test(
    "a silent socket is closed after the idle timeout and its session is gone",
    async () => {
      const { node, engine } = await startWsNode("pglite", { wsIdleTimeout: 8 });
      try {
        const u = await createUser(node, "silent");
        const { sock, head } = await rawHandshake(node, { authorization: `Bearer ${u.token}`, "x-device-id": "silent" });
        expect(head).toStartWith("HTTP/1.1 101");
        expect(node.ws.registry.session(u.userId, "silent")).toBeDefined();
        // Never answer the server's pings: the raw socket reads and ignores everything.
        sock.on("data", () => {});
        const closedAt = await new Promise<number>((resolve) => sock.once("close", () => resolve(Date.now())));
        expect(closedAt).toBeGreaterThan(0);
        expect(node.ws.registry.session(u.userId, "silent")).toBeUndefined();
        expect(engine.closed.some((s) => s.userId === u.userId && s.deviceId === "silent")).toBe(true);
      } finally {
        await node.stop();
      }
    },
    { timeout: 40_000 },
  );
});
