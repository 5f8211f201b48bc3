import { and, eq, lt } from "drizzle-orm";
import { e2eeDeviceKeys, trustAudit, userDevices } from "../../db/schema/index.ts";
import { trustEventBytes, verifyEd25519Base64, type TrustEventFields } from "../../protocol/e2ee.ts";
import { emit } from "../social/context.ts";
import { fail, ok, type Result } from "../errors.ts";
import { DESTROYED, deviceRow, mayWatch, type E2eeContext } from "./context.ts";
import { activeDevice, registeredKey } from "./keys.ts";
import { isTrustEventMethod, isTrustState, legalTrustEvent, type TrustEventMethod, type TrustState } from "../../model/trust.ts";

/** A signed trust event as submitted (the actor is the token's user and device). */
export type TrustEventInput = Omit<TrustEventFields, "actor_uid" | "actor_device_id"> & { readonly actor_signature: string };

/** The §4.6 broadcast payload. */
export interface TrustChanged {
  readonly actor_uid: bigint;
  readonly target_uid: bigint;
  readonly target_device_id: string;
  readonly to_state: TrustState;
  readonly method: TrustEventMethod;
  readonly ts: number;
}

/**
 * Signed trust events (spec §4.6, §5.9, §6): checked in an order that tells a
 * forger nothing (shape and whitelist, time window, the actor's key, the
 * signature, then the target), written to trust_audit with the replay mark in
 * one transaction, then broadcast. A refused event writes and sends nothing.
 */
export class TrustEvents {
  constructor(private readonly ctx: E2eeContext) {}

  async submit(me: bigint, myDevice: string, e: TrustEventInput): Promise<Result<TrustChanged & { id: bigint }>> {
    const { method, from_state: from, to_state: to } = e;
    if (!isTrustEventMethod(method)) return fail("bad_request", "method must be qr_scan, manual_number, revoke or device_destroyed");
    if (!isTrustState(from) || !isTrustState(to) || !legalTrustEvent(from, to, method)) {
      return fail("bad_request", `illegal trust transition ${from} → ${to} by ${method}`);
    }
    const now = this.ctx.now();
    if (Math.abs(now - e.ts) > this.ctx.config.e2eeTrustWindowMs) return fail("conflict", "stale trust event: ts is outside the accepted window");
    const device = await activeDevice(this.ctx, me, myDevice);
    if (!device.ok) return device;
    const actorKey = await registeredKey(this.ctx, me, myDevice);
    if (!actorKey) return fail("e2ee_key_not_found", "key does not exist");
    const fields: TrustEventFields = { ...e, actor_uid: me, actor_device_id: myDevice };
    let signed: Uint8Array<ArrayBuffer>;
    try {
      signed = trustEventBytes(fields);
    } catch (err) {
      return fail("bad_request", (err as Error).message);
    }
    if (!(await verifyEd25519Base64(actorKey.ed25519, e.actor_signature, signed))) {
      return fail("forbidden", "actor_signature does not verify with the actor device's key");
    }

    const target = e.target_uid;
    if (method === "device_destroyed" && target !== me) return fail("forbidden", "only the owner can destroy a device");
    if (!(await mayWatch(this.ctx, me, target))) return fail("not_a_friend", "trust events may name only your own or a friend's devices");
    const targetKey = await registeredKey(this.ctx, target, e.target_device_id);
    if (!targetKey) return fail("not_found", "the target device has no registered key");
    if (targetKey.ed25519 !== e.target_ed25519) return fail("conflict", "the target device's identity key has changed");
    const own = target === me;
    if (own) {
      const row = await deviceRow(this.ctx.db, target, e.target_device_id);
      if (row?.status === DESTROYED) return fail("conflict", "the device is already destroyed");
    }

    const id = this.ctx.ids.next();
    const written = await this.ctx.db.transaction(async (tx) => {
      // The replay mark: ts must be newer than the last event accepted from this device, under the key just checked.
      const marked = await tx
        .update(e2eeDeviceKeys)
        .set({ lastEventTs: e.ts })
        .where(
          and(
            eq(e2eeDeviceKeys.userId, me),
            eq(e2eeDeviceKeys.deviceId, myDevice),
            eq(e2eeDeviceKeys.ed25519, actorKey.ed25519),
            lt(e2eeDeviceKeys.lastEventTs, e.ts),
          ),
        )
        .returning({ ts: e2eeDeviceKeys.lastEventTs });
      if (marked.length === 0) return false;
      await tx.insert(trustAudit).values({
        id,
        actorUid: me,
        actorDeviceId: myDevice,
        targetUid: target,
        targetDeviceId: e.target_device_id,
        targetEd25519: e.target_ed25519,
        fromState: from,
        toState: to,
        method,
        actorSignature: e.actor_signature,
        ts: e.ts,
      });
      // user_device.trust_state is the owner's own statement about the device; destruction also retires it.
      if (own) {
        await tx
          .update(userDevices)
          .set(method === "device_destroyed" ? { trustState: to, status: DESTROYED } : { trustState: to })
          .where(and(eq(userDevices.userId, target), eq(userDevices.deviceId, e.target_device_id)));
      }
      return true;
    });
    if (!written) return fail("conflict", "replayed trust event: ts is not newer than this device's last event");

    const event: TrustChanged = { actor_uid: me, target_uid: target, target_device_id: e.target_device_id, to_state: to, method, ts: e.ts };
    await this.broadcast(event, myDevice);
    return ok({ ...event, id });
  }

  /**
   * Spec §6: to the actor's other devices; a change to revoked also to the target user. A destroyed device
   * concerns everyone who may encrypt to it, so its revocation also goes to the owner's friends.
   */
  private async broadcast(event: TrustChanged, actorDevice: string): Promise<void> {
    const payload = event as unknown as Record<string, unknown>;
    const actor = event.actor_uid;
    await emit(this.ctx, [actor], "e2ee_trust_changed", payload, { exceptDevice: { userId: actor, deviceId: actorDevice } });
    if (event.to_state !== "revoked") return;
    const others = new Set<bigint>();
    if (event.target_uid !== actor) others.add(event.target_uid);
    if (event.method === "device_destroyed") for (const f of await this.ctx.facts.friendsOf(actor)) others.add(f);
    if (others.size) await emit(this.ctx, others, "e2ee_trust_changed", payload);
  }
}
