import { and, eq } from "drizzle-orm";
import { e2eeDeviceKeys, userDevices } from "../../db/schema/index.ts";
import { deviceKeyBytes, importWrapKey, verifyEd25519Base64, type DeviceKeyFields, type DeviceKeysView } from "../../protocol/e2ee.ts";
import { emit } from "../social/context.ts";
import { userKeys } from "../social/rules.ts";
import { fail, ok, type Result } from "../errors.ts";
import { deviceRow, isRetired, mayWatch, type E2eeContext } from "./context.ts";

export interface KeyBundleInput {
  readonly ed25519: string;
  readonly curve25519: string;
  readonly wrap_key: string;
  readonly key_signature: string;
}

export interface Registered {
  readonly key_version: number;
  /** The identity key differs from the one registered before (peers were told). */
  readonly identity_changed: boolean;
}

/** A device's registered key, or undefined. */
export async function registeredKey(ctx: E2eeContext, userId: bigint, deviceId: string) {
  const [row] = await ctx.db
    .select()
    .from(e2eeDeviceKeys)
    .where(and(eq(e2eeDeviceKeys.userId, userId), eq(e2eeDeviceKeys.deviceId, deviceId)));
  return row;
}

/** The acting device of a request: named by the token and still active in user_device. */
export async function activeDevice(ctx: E2eeContext, userId: bigint, deviceId: string): Promise<Result<void>> {
  if (!deviceId) return fail("bad_request", "the access token names no device (log in with X-Device-ID)");
  const row = await deviceRow(ctx.db, userId, deviceId);
  if (!row || isRetired(row.status)) return fail("forbidden", "this device is not active");
  return ok(undefined);
}

/** Device identity keys (spec §2.10, docs/e2ee.md): register, rotate, read. */
export class DeviceKeys {
  constructor(private readonly ctx: E2eeContext) {}

  /**
   * Registers or rotates the calling device's keys. The bundle must be signed by its own ed25519 key.
   * Any change bumps key_version; a changed identity key is announced to every friend and to the owner's
   * other devices (e2ee_device_key_changed). Registering the same bundle again changes nothing.
   */
  async register(me: bigint, deviceId: string, input: KeyBundleInput): Promise<Result<Registered>> {
    const device = await activeDevice(this.ctx, me, deviceId);
    if (!device.ok) return device;
    const fields: DeviceKeyFields = { uid: me, device_id: deviceId, ...input };
    let signed: Uint8Array<ArrayBuffer>;
    try {
      signed = deviceKeyBytes(fields);
    } catch (e) {
      return fail("bad_request", (e as Error).message);
    }
    if (!(await importWrapKey(input.wrap_key))) return fail("bad_request", "wrap_key must be Base64 SPKI of an RSA-OAEP key of 2048 bits or more");
    if (!(await verifyEd25519Base64(input.ed25519, input.key_signature, signed))) {
      return fail("bad_request", "key_signature does not verify with ed25519");
    }
    const t = this.ctx.now();
    const outcome = await this.ctx.db.transaction(async (tx) => {
      const [old] = await tx
        .select()
        .from(e2eeDeviceKeys)
        .where(and(eq(e2eeDeviceKeys.userId, me), eq(e2eeDeviceKeys.deviceId, deviceId)))
        .for("update");
      if (!old) {
        const inserted = await tx.insert(e2eeDeviceKeys).values({
          userId: me,
          deviceId,
          ed25519: input.ed25519,
          curve25519: input.curve25519,
          wrapKey: input.wrap_key,
          keySignature: input.key_signature,
          keyVersion: 1,
          createdAt: t,
          updatedAt: t,
        }).onConflictDoNothing().returning({ v: e2eeDeviceKeys.keyVersion });
        // Another first registration of this device committed in between: this bundle was not stored.
        return { key_version: inserted.length ? 1 : 0, previous: undefined };
      }
      if (old.ed25519 === input.ed25519 && old.curve25519 === input.curve25519 && old.wrapKey === input.wrap_key) {
        return { key_version: old.keyVersion, previous: undefined };
      }
      const version = old.keyVersion + 1;
      await tx
        .update(e2eeDeviceKeys)
        .set({ ed25519: input.ed25519, curve25519: input.curve25519, wrapKey: input.wrap_key, keySignature: input.key_signature, keyVersion: version, updatedAt: t })
        .where(and(eq(e2eeDeviceKeys.userId, me), eq(e2eeDeviceKeys.deviceId, deviceId)));
      return { key_version: version, previous: old.ed25519 !== input.ed25519 ? old.ed25519 : undefined };
    });
    if (outcome.key_version === 0) return fail("conflict", "the device's keys were registered concurrently; register again");
    if (outcome.previous !== undefined) {
      const friends = await this.ctx.facts.friendsOf(me);
      await emit(this.ctx, [me, ...friends], "e2ee_device_key_changed", {
        ...userKeys(me),
        device_id: deviceId,
        ed25519: input.ed25519,
        curve25519: input.curve25519,
        wrap_key: input.wrap_key,
        key_signature: input.key_signature,
        key_version: outcome.key_version,
        previous_ed25519: outcome.previous,
        ts: t,
      }, { exceptDevice: { userId: me, deviceId } });
    }
    return ok({ key_version: outcome.key_version, identity_changed: outcome.previous !== undefined });
  }

  /** Every device of `of` that has published keys, destroyed ones included (their status says so). Self or friends only. */
  async list(me: bigint, of: bigint): Promise<Result<DeviceKeysView[]>> {
    if (!(await mayWatch(this.ctx, me, of))) return fail("not_a_friend", "only a friend's device keys can be read");
    const rows = await this.ctx.db
      .select({
        device_id: e2eeDeviceKeys.deviceId,
        device_type: userDevices.deviceType,
        status: userDevices.status,
        trust_state: userDevices.trustState,
        ed25519: e2eeDeviceKeys.ed25519,
        curve25519: e2eeDeviceKeys.curve25519,
        wrap_key: e2eeDeviceKeys.wrapKey,
        key_signature: e2eeDeviceKeys.keySignature,
        key_version: e2eeDeviceKeys.keyVersion,
        updated_at: e2eeDeviceKeys.updatedAt,
      })
      .from(e2eeDeviceKeys)
      .innerJoin(userDevices, and(eq(userDevices.userId, e2eeDeviceKeys.userId), eq(userDevices.deviceId, e2eeDeviceKeys.deviceId)))
      .where(eq(e2eeDeviceKeys.userId, of))
      .orderBy(e2eeDeviceKeys.deviceId);
    return ok(rows);
  }
}
