/** Two nodes on one PostgreSQL database and one Redis: fan-out across nodes, acks, takeover. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { IbisConnection } from "../../src/client/index.ts";
import { users } from "../../src/db/schema/index.ts";
import type { IbisNode } from "../../src/node.ts";
import { startTwoNodes, type TwoNodes } from "../support/cluster.ts";
import { c2c } from "../support/ws.ts";

describe("delivery across two nodes [postgres + redis]", () => {
  let nodes: TwoNodes;
  let a: IbisNode, b: IbisNode;
  const ALICE = 310000000000000001n;
  const BOB = 310000000000000002n;
  beforeAll(async () => {
    nodes = await startTwoNodes("postgres", { allowStrangers: true, throttleOff: true });
    ({ a, b } = nodes);
    await nodes.store.store.db.insert(users).values([ALICE, BOB].map((id) => ({ id, account: `u${id}`, passwordHash: "x" })));
  });
  afterAll(() => nodes.stop());
  const open = async (node: IbisNode, user: bigint, did: string) => {
    const { token } = await node.services.tokens.pair(user, did);
    return IbisConnection.open({ url: node.url, token, deviceId: did, protocols: ["svc.v2"] });
  };

  test("a message stored on one node reaches devices on the other; their acks are confirmed there", async () => {
    expect(a.services.nodeId).not.toBe(b.services.nodeId);
    const a1 = await open(a, ALICE, "a1");
    const a2 = await open(b, ALICE, "a2");
    const b1 = await open(b, BOB, "b1");
    const m = c2c(ALICE, BOB, "across");
    a1.send(m);
    expect(await a1.nextMessage((x) => x.in_reply_to === m.id)).toMatchObject({ type: "C2C_SERVER_ACK" });
    for (const c of [b1, a2]) expect(await c.nextMessage((x) => x.id === m.id && x.type === "C2C")).toMatchObject({ payload: { text: "across" } });
    b1.ack({ type: "C2C", msgId: m.id }, "text");
    expect(await b1.nextAction("CLIENT_ACK_CONFIRM")).toMatchObject({ id: m.id });
    expect(b.services.delivery!.core.wheel.size).toBe(1); // a2 has not acked yet
    a2.ack({ type: "C2C", msgId: m.id }, "frame");
    await a2.nextAction("CLIENT_ACK_CONFIRM");
    expect(b.services.delivery!.core.wheel.size).toBe(0);
    for (const c of [a1, a2, b1]) await c.close();
  });

  test("a device reconnecting on the other node closes its old connection there", async () => {
    const old = await open(b, BOB, "b9");
    // The old connection's presence entry is written after the handshake: wait for it (else there is nothing to take over).
    for (let i = 0; i < 500; i++) {
      const at = (await a.services.presence.lookup([BOB])).get(BOB)?.find((e) => e.deviceId === "b9");
      if (at?.nodeId === b.services.nodeId) break;
      await Bun.sleep(5);
    }
    const fresh = await open(a, BOB, "b9");
    expect(await old.nextAction("logged_another_device")).toMatchObject({ type: "S2C" });
    expect((await old.closed).code).toBe(4103);
    await fresh.close();
  });
});
