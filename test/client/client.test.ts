/**
 * IbisClient against a real node: REST sign-up and friends, svc.v2 delivery
 * both ways with the text ack in MSG frames (the server's pending set is
 * empty afterwards), offline pull after a restart of the client, reconnect
 * with the outbox resent, refusals, and the refresh-token flow.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CloseCode, IbisClient, IbisSendError, type StateChange, type WireMessage } from "../../src/client/index.ts";
import { startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";

let n = 0;
const PWD = "correct horse battery";

/** A client with the received messages and notices collected. */
function client(node: TestNode, deviceId: string, session?: IbisClient["api"]["session"]) {
  const c = new IbisClient({ url: node.url, deviceId, deviceType: "web", ...(session ? { session } : {}) });
  const got: WireMessage[] = [];
  const notices: WireMessage[] = [];
  const states: StateChange[] = [];
  c.on("message", (m) => got.push(m));
  c.on("notice", (m) => notices.push(m));
  c.on("state", (s) => states.push(s));
  return { c, got, notices, states };
}

async function until<T>(what: string, f: () => T | undefined | false | Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

const online = (c: IbisClient) => until("online", () => c.state.state === "online");

async function signedUp(node: TestNode, name: string) {
  const x = client(node, `${name}-web`);
  await x.c.api.signup(`${name}-${Date.now().toString(36)}-${n++}`, PWD, name);
  return x;
}

for (const kind of storeKinds()) {
  describe(`IbisClient end to end [${kind}]`, () => {
    let node: TestNode;
    let alice: ReturnType<typeof client>, bob: ReturnType<typeof client>;

    beforeAll(async () => {
      node = await startTestNode(kind);
      alice = await signedUp(node, "alice");
      bob = await signedUp(node, "bob");
      const bobId = bob.c.api.session!.userId;
      await alice.c.api.addFriend(bobId, { msg: "hi" });
      await bob.c.api.confirmFriend(alice.c.api.session!.userId);
      alice.c.start();
      bob.c.start();
      await Promise.all([online(alice.c), online(bob.c)]);
    });
    afterAll(async () => {
      alice?.c.stop();
      bob?.c.stop();
      await node.stop();
    });

    test("C2C both ways over svc.v2: SERVER_ACK resolves the send, the peer gets it once and its ack empties the pending set", async () => {
      const bobId = bob.c.api.session!.userId;
      const aliceId = alice.c.api.session!.userId;
      const ack = await alice.c.sendText("C2C", bobId, "hello bob");
      expect(ack.type).toBe("C2C_SERVER_ACK");
      expect(ack.server_ts).toBeGreaterThan(0);
      const atBob = await until("bob's message", () => bob.got.find((m) => m.payload?.text === "hello bob"));
      expect(atBob).toMatchObject({ type: "C2C", from: aliceId, to: bobId, msg_type: "text" });

      await bob.c.sendText("C2C", aliceId, "hello alice");
      await until("alice's message", () => alice.got.find((m) => m.payload?.text === "hello alice"));
      // Both acks reached the server: nothing is pending for either device.
      await until("bob's pending set empty", async () => (await bob.c.api.offline()).list.length === 0 || undefined);
      expect((await bob.c.api.offline()).list.filter((m) => m.type === "C2C")).toEqual([]);
      expect((await alice.c.api.offline()).list.filter((m) => m.type === "C2C")).toEqual([]);
      expect(bob.got.filter((m) => m.id === atBob.id)).toHaveLength(1);
    });

    test("friend notices arrive as notices (apply_friend was stored and pulled or pushed)", async () => {
      const carol = await signedUp(node, "carol");
      carol.c.start();
      await online(carol.c);
      await alice.c.api.addFriend(carol.c.api.session!.userId);
      const apply = await until("apply_friend", () => carol.notices.find((m) => m.action === "apply_friend"));
      expect(BigInt(apply.payload.user_id)).toBe(alice.c.api.session!.userId);
      carol.c.stop();
    });

    test("a refused send rejects with the server's action", async () => {
      const stranger = await signedUp(node, "stranger");
      const err = await alice.c.sendText("C2C", stranger.c.api.session!.userId, "hi?").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(IbisSendError);
      expect((err as IbisSendError).action).toBe("not_a_friend");
      expect(alice.c.unsent).toEqual([]);
    });

    test("offline: messages sent while bob's client is stopped arrive through the pull when a new client resumes the session", async () => {
      const session = bob.c.api.session!;
      bob.c.stop();
      await until("bob's session gone", () => !node.ws.registry.session(session.userId, session.deviceId));
      const texts = ["while away 1", "while away 2", "while away 3"];
      for (const t of texts) await alice.c.sendText("C2C", session.userId, t);

      bob = client(node, session.deviceId, session);
      bob.c.start();
      await until("the pulled messages", () => texts.every((t) => bob.got.some((m) => m.payload?.text === t)));
      expect(bob.got.filter((m) => texts.includes(m.payload?.text)).map((m) => m.payload.text)).toEqual(texts); // oldest first
      await until("offline acked", async () => (await bob.c.api.offline()).list.length === 0 || undefined);
    });

    test("a lost connection reconnects at once (§8: the first retry is immediate) and the outbox goes out on the new one", async () => {
      await online(alice.c);
      const bobId = bob.c.api.session!.userId;
      const session = alice.c.api.session!;
      let queued: Promise<WireMessage> | undefined;
      const off = alice.c.on("state", (s) => {
        if (s.state === "offline" && !queued) queued = alice.c.sendText("C2C", bobId, "sent while offline");
      });
      node.ws.registry.session(session.userId, session.deviceId)!.close(CloseCode.ServiceRestart, "restart");
      await until("queued", () => queued);
      const ack = await queued!;
      off();
      expect(ack.type).toBe("C2C_SERVER_ACK");
      expect(alice.c.state.state).toBe("online");
      expect(alice.states.some((s) => s.state === "offline" && s.code === CloseCode.ServiceRestart && s.retryInMs === 0)).toBe(true);
      await until("delivered", () => bob.got.find((m) => m.payload?.text === "sent while offline"));
    });

    test("replaced by another connection of the same device (4103): the client stops instead of fighting back", async () => {
      const dave = await signedUp(node, "dave");
      dave.c.start();
      await online(dave.c);
      const s = dave.c.api.session!;
      const other = new IbisClient({ url: node.url, deviceId: s.deviceId, session: { ...s } });
      other.start();
      await until("dave stopped", () => dave.c.state.state === "stopped");
      expect(dave.c.state.code).toBe(CloseCode.Replaced);
      expect(dave.notices.some((m) => m.action === "logged_another_device")).toBe(true);
      other.stop();
    });
  });
}

describe("IbisClient token refresh (fake server clock)", () => {
  test("please_refresh_token: the client refreshes over REST and presents the new token; the connection stays", async () => {
    let t = Date.now();
    const node = await startTestNode("pglite", { accessTokenTtl: 60, tokenClockSkew: 0, tokenRefreshWindow: 8_000 }, { now: () => t });
    try {
      const x = await signedUp(node, "erin");
      const before = x.c.api.session!.token;
      x.c.start();
      await online(x.c);
      t += 60_000;
      node.ws.sweep();
      await until("a new token", () => x.c.api.session!.token !== before);
      await Bun.sleep(100); // the C2S refresh_token reaches the server
      t += 8_000;
      node.ws.sweep();
      await Bun.sleep(100);
      expect(x.c.state.state).toBe("online");
      expect(x.notices.some((m) => m.action === "token_refreshed")).toBe(true);
      x.c.stop();
    } finally {
      await node.stop();
    }
  });
});
