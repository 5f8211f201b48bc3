/**
 * Issue 16 end to end: SDK clients (src/client/e2ee) against a real node over
 * HTTP, every device also on a real socket receiving the §6 broadcasts through
 * the real delivery path. Both stores.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { IbisApi, IbisApiError, type IbisConnection } from "../../src/client/index.ts";
import { E2eeClient, generateIdentity, signTrustEvent, verifiedYouMessage, verifiedYouQr, type DeviceIdentity } from "../../src/client/e2ee/index.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";
import { befriend, connect, signup, withAction, type Account } from "./support.ts";

for (const kind of storeKinds()) {
  describe(`E2EE device keys and trust events [${kind}]`, () => {
    let node: TestNode;
    let alice: Account, bob: Account, carol: Account, dave: Account;
    const live = new Map<string, IbisConnection>();
    const sdk = new Map<string, E2eeClient>();
    const owner = new Map<string, Account>();

    const client = async (who: Account, device: string, identity?: DeviceIdentity) => {
      const c = new E2eeClient(identity ?? (await generateIdentity(who.userId, device)), new IbisApi({ url: node.url, token: who.tokens[device]! }));
      sdk.set(device, c);
      return c;
    };
    const auditRows = async () => Number((await node.services.store.rows<{ n: number }>(sql`select count(*)::int as n from trust_audit`))[0]!.n);

    /** The next notice with `action` on each device; acknowledged so it is not retried. */
    const next = async (devices: string[], action: string) => {
      const got: Record<string, any>[] = [];
      for (const d of devices) {
        const m = await live.get(d)!.nextMessage(withAction(action));
        live.get(d)!.ack({ type: "S2C", msgId: m.id });
        got.push(m.payload);
      }
      return got;
    };
    /** No buffered notice with `action` on these devices (call after a later notice proved delivery moved on). */
    const none = (devices: string[], action: string) => {
      for (const d of devices) {
        expect(live.get(d)!.pending.filter((e) => e.kind === "message" && e.msg.action === action)).toEqual([]);
      }
    };

    beforeAll(async () => {
      node = await startTestNode(kind);
      alice = await signup(node, "alice", ["a1", "a2"]);
      bob = await signup(node, "bob", ["b1", "b2"]);
      carol = await signup(node, "carol", ["c1", "c2"]);
      dave = await signup(node, "dave", ["d1"]);
      await befriend(node, alice, bob);
      await befriend(node, alice, carol);
      await befriend(node, bob, carol);
      for (const who of [alice, bob, carol, dave]) {
        for (const d of Object.keys(who.tokens)) {
          owner.set(d, who);
          live.set(d, await connect(node, who, d, d.endsWith("2") ? "svc-json" : "svc.v2"));
          await client(who, d);
        }
      }
      for (const [d, c] of sdk) if (d !== "d1") await c.registerKeys();
    }, 60_000);
    afterAll(async () => {
      for (const c of live.values()) await c.close().catch(() => {});
      await node.stop();
    });

    test("a device publishes its keys; friends read them, strangers do not", async () => {
      const seen = await sdk.get("b1")!.devicesOf(alice.userId);
      expect(seen.map((d) => [d.device_id, d.key_version, d.status])).toEqual([["a1", 1, 1], ["a2", 1, 1]]);
      expect(sdk.get("b1")!.trustOf(alice.userId, "a1")?.trust_state).toBe("unverified");
      expect(seen[0]!.wrap_key).toBe(sdk.get("a1")!.identity.published.wrap_key);
      const refused = await sdk.get("d1")!.devicesOf(alice.userId).catch((e: IbisApiError) => e);
      expect(refused).toBeInstanceOf(IbisApiError);
      expect((refused as IbisApiError).code).toBe(941);
      // Registering the same bundle again changes nothing.
      expect(await sdk.get("a1")!.registerKeys()).toEqual({ key_version: 1, identity_changed: false });
    });

    test("a changed identity key reaches every device of every friend and the owner's other devices, nobody else", async () => {
      await sdk.get("c1")!.devicesOf(bob.userId);
      const old = sdk.get("c1")!.trustOf(bob.userId, "b2")!;
      const fresh = await client(bob, "b2", await generateIdentity(bob.userId, "b2"));
      expect(await fresh.registerKeys()).toEqual({ key_version: 2, identity_changed: true });
      const notices = await next(["a1", "a2", "c1", "c2", "b1"], "e2ee_device_key_changed");
      for (const p of notices) {
        expect(p).toMatchObject({ user_id: bob.userId, device_id: "b2", ed25519: fresh.identity.published.ed25519, previous_ed25519: old.peer_ed25519, key_version: 2 });
      }
      // The SDK checks the notice's self-signature and starts the device over as unverified under the new key.
      const change = await sdk.get("c1")!.keyChanged(notices[2]!);
      expect(change?.record).toMatchObject({ peer_ed25519: fresh.identity.published.ed25519, trust_state: "unverified" });
      const forged = { ...notices[2]!, ed25519: sdk.get("a1")!.identity.published.ed25519 };
      expect(await sdk.get("c1")!.keyChanged(forged)).toBeUndefined();
      none(["d1", "b2"], "e2ee_device_key_changed");
    });

    test("QR both ways: each verification reaches the actor's other devices only", async () => {
      const [a1, b1] = [sdk.get("a1")!, sdk.get("b1")!];
      expect(await b1.scanQr(await a1.qr())).toMatchObject({ trust_state: "verified", verified_by: "qr_scan", peer_uid: alice.userId });
      const [toB2] = await next(["b2"], "e2ee_trust_changed");
      expect(Object.keys(toB2!).sort()).toEqual(["actor_uid", "method", "target_device_id", "target_uid", "to_state", "ts"]);
      expect(toB2).toMatchObject({ actor_uid: bob.userId, target_uid: alice.userId, target_device_id: "a1", to_state: "verified", method: "qr_scan" });

      // "I verified you" (§4.6): bob's device sends its own QR to alice, whose a1 verifies back from it.
      live.get("b1")!.send(await verifiedYouMessage(b1.identity, alice.userId), "json");
      const told = await live.get("a1")!.nextMessage((m) => m.type === "C2C" && verifiedYouQr(m) !== undefined);
      live.get("a1")!.ack({ type: "C2C", msgId: told.id });
      expect(await a1.scanQr(verifiedYouQr(told)!)).toMatchObject({ trust_state: "verified", peer_uid: bob.userId, peer_device_id: "b1" });
      const [toA2] = await next(["a2"], "e2ee_trust_changed");
      expect(toA2).toMatchObject({ actor_uid: alice.userId, target_uid: bob.userId, target_device_id: "b1", method: "qr_scan" });
      // A tampered code is refused before anything is sent.
      const tampered = (await a1.qr()).replace(/"device_id":"a1"/, '"device_id":"a2"');
      await expect(b1.scanQr(tampered)).rejects.toThrow("tampered");
      none(["a1", "b1", "c1", "c2", "d1"], "e2ee_trust_changed");
    });

    test("safety number: both sides compute the same 60 digits, then verify manually", async () => {
      const [a2, c2] = [sdk.get("a2")!, sdk.get("c2")!];
      await a2.devicesOf(carol.userId);
      await c2.devicesOf(alice.userId);
      const mine = await a2.safetyNumberWith(carol.userId, "c2");
      expect(mine).toMatch(/^(\d{5} ){11}\d{5}$/);
      expect(await c2.safetyNumberWith(alice.userId, "a2")).toBe(mine);
      await a2.markVerified(carol.userId, "c2", "manual_number");
      await c2.markVerified(alice.userId, "a2", "manual_number");
      expect((await next(["a1"], "e2ee_trust_changed"))[0]).toMatchObject({ actor_uid: alice.userId, target_device_id: "c2", method: "manual_number" });
      expect((await next(["c1"], "e2ee_trust_changed"))[0]).toMatchObject({ actor_uid: carol.userId, target_device_id: "a2", method: "manual_number" });
    });

    test("a revocation reaches the actor's other devices and every device of the target", async () => {
      await sdk.get("c1")!.devicesOf(alice.userId);
      await sdk.get("c1")!.revoke(alice.userId, "a1");
      for (const p of await next(["c2", "a1", "a2"], "e2ee_trust_changed")) {
        expect(p).toMatchObject({ actor_uid: carol.userId, target_uid: alice.userId, target_device_id: "a1", to_state: "revoked", method: "revoke" });
      }
      none(["b1", "b2", "d1"], "e2ee_trust_changed");
    });

    test("forged, replayed, stale, unknown-key and illegal events are refused: nothing written, nothing sent", async () => {
      const a1 = sdk.get("a1")!;
      const target = { target_uid: carol.userId, target_device_id: "c1", target_ed25519: sdk.get("c1")!.identity.published.ed25519 };
      const event = { ...target, from_state: "unverified", to_state: "verified", method: "qr_scan", ts: Date.now() };
      const post = async (who: Account, device: string, body: Record<string, unknown>) =>
        (await api(node, "POST", "/api/v1/e2ee/trust_event", { token: who.tokens[device], body })).body;
      const before = await auditRows();

      // Forged: signed by another device's key (bob's), presented by alice's a1.
      const forged = await post(alice, "a1", { ...event, actor_signature: await signTrustEvent(sdk.get("b1")!.identity, event) });
      expect(forged).toMatchObject({ code: 403, msg: "actor_signature does not verify with the actor device's key" });
      // A good signature over other fields (the to_state changed after signing).
      const signed = await signTrustEvent(a1.identity, event);
      expect((await post(alice, "a1", { ...event, method: "manual_number", actor_signature: signed })).code).toBe(403);
      // Stale: outside the window (signed correctly).
      const old = { ...event, ts: Date.now() - 10 * 60_000 };
      expect(await post(alice, "a1", { ...old, actor_signature: await signTrustEvent(a1.identity, old) })).toMatchObject({ code: 409 });
      // Unknown key: dave's device never registered one.
      const byDave = { ...event, target_uid: dave.userId, target_device_id: "d1" };
      expect(await post(dave, "d1", { ...byDave, actor_signature: await signTrustEvent(sdk.get("d1")!.identity, byDave) })).toMatchObject({ code: 5054 });
      // Illegal transitions, correctly signed: revoked → verified, and verified → verified.
      for (const [from, to] of [["revoked", "verified"], ["verified", "verified"], ["unverified", "unverified"]] as const) {
        const bad = { ...event, from_state: from, to_state: to };
        const res = await post(alice, "a1", { ...bad, actor_signature: await signTrustEvent(a1.identity, bad) });
        expect(res).toMatchObject({ code: 400, msg: `illegal trust transition ${from} → ${to} by qr_scan` });
      }
      // Replayed: the same signed event twice: the first is accepted, the copy refused.
      const good = { ...event, ts: Date.now() };
      const body = { ...good, actor_signature: await signTrustEvent(a1.identity, good) };
      expect((await post(alice, "a1", body)).code).toBe(0);
      expect(await post(alice, "a1", body)).toMatchObject({ code: 409, msg: "replayed trust event: ts is not newer than this device's last event" });
      // An older ts inside the window is a replay too.
      const earlier = { ...event, ts: good.ts - 1000 };
      expect((await post(alice, "a1", { ...earlier, actor_signature: await signTrustEvent(a1.identity, earlier) })).code).toBe(409);

      expect(await auditRows()).toBe(before + 1);
      // a2's next trust notice is the accepted event: none of the refused ones was broadcast.
      const [got] = await next(["a2"], "e2ee_trust_changed");
      expect(got).toMatchObject({ actor_uid: alice.userId, target_device_id: "c1", ts: good.ts });
      none(["a2", "c1", "c2"], "e2ee_trust_changed");
    });

    test("the owner destroys a device: status -1, trust_state revoked, revoked broadcast to the owner's devices and friends", async () => {
      const b1 = sdk.get("b1")!;
      await b1.devicesOf(bob.userId);
      await b1.destroyOwnDevice("b2");
      for (const p of await next(["b2", "a1", "a2", "c1", "c2"], "e2ee_trust_changed")) {
        expect(p).toMatchObject({ actor_uid: bob.userId, target_uid: bob.userId, target_device_id: "b2", to_state: "revoked", method: "device_destroyed" });
      }
      const listed = await sdk.get("a1")!.devicesOf(bob.userId);
      expect(listed.find((d) => d.device_id === "b2")).toMatchObject({ status: -1, trust_state: "revoked" });
      // A destroyed device is signed out (docs/accounts.md): its socket is closed, its token refused; it cannot be destroyed twice.
      expect((await live.get("b2")!.nextAction("device_force_offline")).payload).toMatchObject({ reason: "signed_out", device_id: "b2" });
      expect((await live.get("b2")!.closed).code).toBe(4104);
      await expect(sdk.get("b2")!.registerKeys()).rejects.toMatchObject({ code: 401 });
      await expect(b1.sendTrustEvent({ target_uid: bob.userId, target_device_id: "b2", target_ed25519: sdk.get("b2")!.identity.published.ed25519, from_state: "verified", to_state: "revoked", method: "device_destroyed" })).rejects.toMatchObject({ code: 409 });
      // Only the owner destroys: alice cannot destroy bob's device.
      const a1 = sdk.get("a1")!;
      await expect(a1.sendTrustEvent({ target_uid: bob.userId, target_device_id: "b1", target_ed25519: b1.identity.published.ed25519, from_state: "unverified", to_state: "revoked", method: "device_destroyed" })).rejects.toMatchObject({ code: 403 });
    });

    test("every accepted event is one audit row whose signature checks again", async () => {
      const rows = await node.services.store.rows<Record<string, any>>(sql`select * from trust_audit order by id`);
      expect(rows.map((r) => r.method)).toEqual(["qr_scan", "qr_scan", "manual_number", "manual_number", "revoke", "qr_scan", "device_destroyed"]);
      const { trustEventBytes, verifyEd25519Base64 } = await import("../../src/protocol/e2ee.ts");
      for (const r of rows) {
        const actor = [...sdk.entries()].find(([d, c]) => d === r.actor_device_id && c.identity.uid === BigInt(r.actor_uid))![1];
        const bytes = trustEventBytes({ ...r, actor_uid: BigInt(r.actor_uid), target_uid: BigInt(r.target_uid), ts: Number(r.ts) } as never);
        expect(await verifyEd25519Base64(actor.identity.published.ed25519, r.actor_signature, bytes)).toBe(true);
      }
    });
  });
}
