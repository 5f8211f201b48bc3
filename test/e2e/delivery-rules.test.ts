/**
 * Issue 4's "Done when" over real sockets with the SDK, both stores: a
 * duplicate id stored and delivered once, every refusal action, an ack naming
 * another device, idempotent acks, and every chat type's retry schedule on a
 * fake clock given to the real node (the wheel is advanced by hand; a ping
 * round trip orders "what the server sent so far").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { IbisConnection, newMessageId } from "../../src/client/index.ts";
import { messages, users } from "../../src/db/schema/index.ts";
import type { ChatType, ImMessage } from "../../src/delivery/ports.ts";
import { seedAssistants } from "../../src/domain/social/assistants.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";
import { befriend, connect, message, ofType, signup, withAction, type Account } from "./support.ts";
import { E2EE } from "../delivery/harness.ts";


for (const kind of storeKinds()) {
  describe(`delivery rules over real sockets [${kind}]`, () => {
    // On a tick boundary (IBIS_DELIVERY_RETRY_TICK_MS, 100): attempts land exactly on the schedule.
    let clock = Math.floor(Date.now() / 1000) * 1000;
    let node: TestNode;
    let alice: Account, bob: Account, dave: Account;
    let a1: IbisConnection, b1: IbisConnection;
    let pingSeq = 0;
    /** Everything the server sent `c` before this call has arrived once it resolves. */
    const barrier = async (c: IbisConnection) => {
      const seq = ++pingSeq;
      c.ping(seq);
      await c.next((e) => e.kind === "pong" && e.seq === seq);
    };
    const received = (c: IbisConnection, id: string) => c.pending.filter((e) => e.kind === "message" && e.msg.id === id && e.msg.type !== "CLIENT_ACK_CONFIRM").length;
    const drop = (c: IbisConnection) => (c.pending as unknown[]).splice(0);
    /** Waits until a message matching `pred` has arrived at `c`, leaving it buffered. */
    const peek = async (c: IbisConnection, pred: (m: Record<string, any>) => boolean) => {
      for (;;) {
        await barrier(c);
        const hit = c.pending.find((e) => e.kind === "message" && pred(e.msg));
        if (hit?.kind === "message") return hit.msg;
      }
    };

    beforeAll(async () => {
      node = await startTestNode(kind, { throttleOff: true }, { now: () => clock });
      alice = await signup(node, "alice", ["a1"]);
      bob = await signup(node, "bob", ["b1"]);
      dave = await signup(node, "dave", ["d1"]);
      await befriend(node, alice, bob);
      const deny = await api(node, "POST", "/api/v1/friend/denylist/add", { token: dave.tokens["d1"], body: { denied_user_id: alice.userId } });
      expect(deny.body.code).toBe(0);
      a1 = await connect(node, alice, "a1");
      b1 = await connect(node, bob, "b1");
    });
    afterAll(async () => {
      for (const c of [a1, b1]) await c?.close().catch(() => {});
      await node.stop();
    });

    test("a resent id is acknowledged twice, stored once, delivered once", async () => {
      const m = message("C2C", alice.userId, bob.userId, { text: "once" });
      a1.send(m);
      await a1.nextMessage(ofType("C2C_SERVER_ACK", m.id));
      a1.send(m);
      await a1.nextMessage(ofType("C2C_SERVER_ACK", m.id));
      await barrier(b1);
      expect(received(b1, m.id)).toBe(1);
      expect(await node.services.store.db.select().from(messages).where(eq(messages.clientId, m.id))).toHaveLength(1);
      b1.ack({ type: "C2C", msgId: m.id });
      await b1.nextAction("CLIENT_ACK_CONFIRM");
      drop(b1);
    });

    test("every refusal action, each in reply to the message, nothing stored", async () => {
      const carol = await signup(node, "carol", ["c1"]);
      const bobsGroup = await api(node, "POST", "/api/v1/group/add", { token: bob.tokens["b1"], body: { title: "not yours" } });
      const gid = BigInt(bobsGroup.body.payload.group.group_id);
      const [ai] = await seedAssistants(node.services.store.db, node.services.ids, [{ account: `helper-${kind}` }]);
      const cases: [ImMessage, string][] = [
        [message("C2C", alice.userId, carol.userId), "not_a_friend"],
        [message("C2C", alice.userId, dave.userId), "in_denylist"],
        [message("C2G", alice.userId, gid), "not_group_member"],
        [{ ...message("C2C", alice.userId, ai!), payload: "Q2lwaGVy", e2ee: E2EE }, "permission_denied"],
        [{ ...message("C2S", alice.userId, 4242n), payload: { text: "hi", topic_id: 1 } }, "permission_denied"],
        [{ ...message("C2C", alice.userId, bob.userId), msg_type: "nope" }, "invalid_message"],
        [message("C2C", bob.userId, carol.userId), "invalid_message"], // from is not the connection's user
      ];
      for (const [m, action] of cases) {
        a1.send(m, "json");
        const refusal = await a1.nextMessage(withAction(action), 1500).catch((e) => {
          throw new Error(`${action} for ${m.type} to ${m.to}: ${e}; pending ${JSON.stringify(a1.pending.map((x) => x.kind === "message" ? x.msg.action ?? x.msg.type : x.kind))}`);
        });
        expect(refusal).toMatchObject({ type: "S2C", in_reply_to: m.id });
        expect(typeof refusal.payload.content).toBe("string");
        expect(await node.services.store.db.select().from(messages).where(eq(messages.clientId, m.id))).toHaveLength(0);
      }
      // Not JSON at all (a text sub-protocol: the frame is the JSON); the connection stays open.
      const c1 = await connect(node, carol, "c1", "svc-json");
      c1.sendRaw('{"id":"C2C.1.2.r","type":"C2C", nope');
      expect(await c1.nextAction("invalid_json", 1500)).toMatchObject({ type: "S2C", in_reply_to: "C2C.1.2.r" });
      expect(c1.readyState).toBe(WebSocket.OPEN);
      await c1.close();
      await barrier(a1);
      expect(a1.pending.filter((e) => e.kind === "message" && String(e.msg.type).endsWith("SERVER_ACK"))).toHaveLength(0);
      expect(a1.readyState).toBe(WebSocket.OPEN);
    }, 20_000);

    test("an ack naming another device is refused; acks are idempotent in every form", async () => {
      const m = message("C2C", alice.userId, bob.userId, { text: "ack me" });
      a1.send(m);
      await b1.nextMessage(ofType("C2C", m.id));
      b1.sendRaw(`CLIENT_ACK,C2C,${m.id},someone-else`);
      expect(await b1.nextAction("permission_denied")).toMatchObject({ in_reply_to: m.id });
      for (const form of ["text", "protobuf", "frame", "frame"] as const) {
        b1.ack({ type: "C2C", msgId: m.id }, form);
        expect(await b1.nextMessage((x) => x.action === "CLIENT_ACK_CONFIRM" && x.id === m.id)).toMatchObject({ in_reply_to: m.id });
      }
      drop(a1);
    });

    test("retry schedules per chat type on the node's fake clock; the ack stops them", async () => {
      const wheel = node.services.delivery!.core.wheel;
      /** Attempt times (ms after the first) of message `id` at `c`, stepping the clock 100 ms at a time. */
      const attempts = async (c: IbisConnection, id: string, horizon: number) => {
        const start = clock;
        const seen: number[] = [];
        let last = 0;
        for (let t = 0; t <= horizon; t += 100) {
          if (t > 0) {
            clock += 100;
            wheel.advance();
          }
          await barrier(c);
          const n = received(c, id);
          if (n > last) seen.push(clock - start);
          last = n;
        }
        return seen;
      };
      const expectSchedule = async (type: ChatType, send: () => Promise<{ at: IbisConnection; id: string }>, want: number[]) => {
        const { at, id } = await send();
        expect({ type, times: await attempts(at, id, want.at(-1)! + 1000) }).toEqual({ type, times: want });
        drop(at);
      };
      const uplink = async (type: "C2C" | "C2G" | "C2S", to: bigint) => {
        const m = type === "C2S" ? { ...message("C2S", alice.userId, to), payload: { text: "echo", topic_id: 1 } } : message(type, alice.userId, to);
        a1.send(m);
        await a1.nextMessage(ofType(`${type}_SERVER_ACK`, m.id));
        return m;
      };
      const group = await api(node, "POST", "/api/v1/group/add", { token: alice.tokens["a1"], body: { member_uids: [bob.userId] } });
      const gid = BigInt(group.body.payload.group.group_id);
      await b1.nextAction("group_member_join");
      drop(b1);

      await expectSchedule("C2C", async () => ({ at: b1, id: (await uplink("C2C", bob.userId)).id }), [0, 3000]);
      await expectSchedule("C2G", async () => ({ at: b1, id: (await uplink("C2G", gid)).id }), [0]);
      await expectSchedule(
        "C2S",
        async () => {
          const m = await uplink("C2S", 1000n);
          const answer = await peek(a1, (x) => x.type === "C2S" && x.from === 1000n);
          return { at: a1, id: answer.id };
        },
        [0, 5000, 12000, 23000],
      );
      await expectSchedule(
        "S2C",
        async () => {
          await node.services.delivery!.notifier.notify([bob.userId], "app_upgrade", { version: "2" });
          const notice = await peek(b1, (x) => x.action === "app_upgrade");
          return { at: b1, id: notice.id };
        },
        [0, 1500, 3000, 6000, 11000, 18000],
      );
      expect(wheel.size).toBe(0);

      // Acknowledged after the first attempt: no retry.
      const m = await uplink("C2C", bob.userId);
      await b1.nextMessage(ofType("C2C", m.id));
      b1.ack({ type: "C2C", msgId: m.id }, "frame");
      await b1.nextAction("CLIENT_ACK_CONFIRM");
      expect(await attempts(b1, m.id, 4000)).toEqual([]); // the first attempt was taken above; none after
    });
  });
}
