/** Two nodes on one PostgreSQL database and one Redis: fan-out across nodes, acks, takeover. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { IbisConnection } from "../../src/client/index.ts";
import { users } from "../../src/db/schema/index.ts";
import type { IbisNode } from "../../src/node.ts";
import { startTwoNodes, type TwoNodes } from "../support/cluster.ts";
import { c2c } from "../support/ws.ts";
import { newMessageId } from "../../src/client/index.ts";
import { sql } from "drizzle-orm";
import { api } from "../support/node.ts";
import { holdDeviceCheck } from "./harness.ts";
import { openStore, rowsOf } from "../../src/db/store.ts";

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

  test("a cursor advanced on node 2 is what node 1's offline pull honours, before and after it is written", async () => {
    const made = await a.social.groups.create(ALICE, [BOB], "g");
    if (!made.ok) throw new Error(made.error.msg);
    const gid = made.value.group.group_id as bigint;
    const a1 = await open(a, ALICE, "a1");
    const b5 = await open(b, BOB, "b5");
    const list = [0, 1, 2].map((i) => ({ id: newMessageId("C2G"), type: "C2G", from: ALICE, to: gid, msg_type: "text", payload: { text: `g${i}` }, server_ts: 0 }));
    for (const m of list) {
      a1.send(m);
      await a1.nextMessage((x) => x.in_reply_to === m.id && x.type === "C2G_SERVER_ACK");
      await b5.nextMessage((x) => x.id === m.id && x.type === "C2G");
    }
    const { token } = await a.services.tokens.pair(BOB, "b5");
    const pullOnA = async () =>
      (await api(a, "GET", "/api/v1/msg/offline", { token })).body.payload.list.filter((x: { type: string }) => x.type === "C2G").map((x: { id: string }) => x.id);
    const locker = await openStore({ url: nodes.store.url, poolSize: 1, migrate: false });
    try {
      // b5's cursor row is locked: its write waits (reads do not), so node 1 can learn of the acks only through Redis.
      await locker.db.transaction(async (tx) => {
        const held = await tx.execute(sql`select 1 from timeline_cursor where user_id = ${BOB} and device_id = 'b5' and conv_id = ${gid} for update`);
        expect(rowsOf(held)).toHaveLength(1);
        b5.ack({ type: "C2G", msgId: list[0]!.id }, "frame");
        b5.ack({ type: "C2G", msgId: list[2]!.id }, "text");
        for (const m of [list[0]!, list[2]!]) await b5.nextMessage((x) => x.type === "CLIENT_ACK_CONFIRM" && x.id === m.id);
        expect(await pullOnA()).toEqual([list[1]!.id]);
      });
      await b.services.delivery!.flush();
      expect(await pullOnA()).toEqual([list[1]!.id]);
    } finally {
      await locker.close();
    }
    for (const c of [a1, b5]) await c.close();
  });

  test("an offline pull on one node while the device's connect check on the other has not committed waits for that floor", async () => {
    const CAROL = 310000000000000003n;
    await nodes.store.store.db.insert(users).values({ id: CAROL, account: `u${CAROL}`, passwordHash: "x" }).onConflictDoNothing();
    // Hold node a's check of carol's new (unregistered) device until node b's pull is waiting.
    const check = holdDeviceCheck(a.services.delivery!.inbox, "c-race");
    try {
      const c1 = await open(a, CAROL, "c-race");
      for (let i = 0; i < 500 && !(await b.services.presence.lookup([CAROL])).get(CAROL)?.some((e) => e.deviceId === "c-race"); i++) await Bun.sleep(5);
      const a1 = await open(b, ALICE, "a1");
      const m = c2c(ALICE, CAROL, "while checking");
      a1.send(m);
      await a1.nextMessage((x) => x.in_reply_to === m.id);
      await c1.nextMessage((x) => x.id === m.id && x.type === "C2C");
      expect(check.held).toBe(true);
      const { token } = await b.services.tokens.pair(CAROL, "c-race");
      const pull = api(b, "GET", "/api/v1/msg/offline", { token });
      await Bun.sleep(100);
      check.release();
      const ids = (await pull).body.payload.list.map((x: { id: string }) => x.id);
      expect(ids).toContain(m.id);
      for (const c of [a1, c1]) await c.close();
    } finally {
      check.restore();
    }
  });
});
