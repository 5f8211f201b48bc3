/**
 * My devices (docs/accounts.md): the list with what the user needs to decide
 * (type, name, last seen, online now, trust state, signed in), renaming, and
 * remote sign-out. Signing out revokes the device's session (sessions.ts);
 * the caller then cuts its sockets on every node and the remaining devices
 * hear S2C `device_signed_out`. No transport here.
 */
import { and, desc, eq, sql } from "drizzle-orm";
import { authSessions, userDevices } from "../../db/schema/index.ts";
import type { Db } from "../../db/store.ts";
import type { Notifier } from "../../delivery/ports.ts";
import type { Logger } from "../../log.ts";
import type { SessionCutter } from "../auth/revocation.ts";
import type { DeviceSessions } from "../auth/sessions.ts";
import { fail, ok, type Result } from "../errors.ts";
import { userKeys } from "../social/rules.ts";
import type { DeviceItem } from "../../model/device.ts";

export const DEVICE_NAME_MAX = 64;

export interface DevicesDeps {
  readonly db: Db;
  readonly now: () => number;
  readonly sessions: DeviceSessions;
  /** Cuts the signed-out device's sockets on every node (src/node.ts). */
  readonly cutter: SessionCutter;
  readonly notifier: Notifier;
  readonly log: Logger;
}

export type { DeviceItem };

export class Devices {
  constructor(private readonly d: DevicesDeps) {}

  /** The S2C emitter the devices' notices go through (profiles share it). */
  get notifier(): Notifier {
    return this.d.notifier;
  }

  /** Most recently seen first. `online`: the device ids connected now on any node (presence). */
  async list(userId: bigint, currentDevice: string, online: ReadonlySet<string>): Promise<DeviceItem[]> {
    const rows = await this.d.db
      .select({
        deviceId: userDevices.deviceId,
        deviceType: userDevices.deviceType,
        name: userDevices.name,
        trustState: userDevices.trustState,
        status: userDevices.status,
        createdAt: userDevices.createdAt,
        lastSeenAt: userDevices.lastSeenAt,
        // No session row: signed in before sessions existed, never revoked since.
        signedIn: sql<boolean>`coalesce(${authSessions.refreshJti} is not null, true)`,
      })
      .from(userDevices)
      .leftJoin(authSessions, and(eq(authSessions.userId, userDevices.userId), eq(authSessions.deviceId, userDevices.deviceId)))
      .where(eq(userDevices.userId, userId))
      .orderBy(desc(userDevices.lastSeenAt), userDevices.deviceId);
    return rows.map((r) => ({
      device_id: r.deviceId,
      device_type: r.deviceType,
      name: r.name,
      trust_state: r.trustState,
      status: r.status,
      signed_in: r.signedIn === true,
      online: online.has(r.deviceId),
      current: r.deviceId === currentDevice,
      created_at: r.createdAt,
      last_seen_at: r.lastSeenAt,
    }));
  }

  async rename(userId: bigint, deviceId: string, rawName: string): Promise<Result<{ device_id: string; name: string }>> {
    const name = rawName.trim();
    if (name.length > DEVICE_NAME_MAX || /[\u0000-\u001f\u007f]/.test(name)) {
      return fail("bad_request", `name must be at most ${DEVICE_NAME_MAX} characters on one line`);
    }
    const done = await this.d.db
      .update(userDevices)
      .set({ name })
      .where(and(eq(userDevices.userId, userId), eq(userDevices.deviceId, deviceId)))
      .returning({ deviceId: userDevices.deviceId });
    if (done.length === 0) return fail("not_found", "no such device of yours");
    return ok({ device_id: deviceId, name });
  }

  /**
   * Revokes `deviceId`'s session (one of the user's registered devices), cuts
   * the sockets holding its tokens everywhere, then tells the user's other devices.
   */
  async signOut(userId: bigint, byDevice: string, deviceId: string): Promise<Result<{ at: number }>> {
    const [known] = await this.d.db
      .select({ deviceId: userDevices.deviceId })
      .from(userDevices)
      .where(and(eq(userDevices.userId, userId), eq(userDevices.deviceId, deviceId)));
    if (!known) return fail("not_found", "no such device of yours");
    const gen = (await this.d.sessions.revoke(userId, deviceId))!;
    this.d.cutter.cut({ userId, deviceId, belowGen: gen, reason: "signed_out", byDeviceId: byDevice });
    const at = this.d.now();
    try {
      await this.d.notifier.notify(
        [userId],
        "device_signed_out",
        { ...userKeys(userId), device_id: deviceId, by_device_id: byDevice, signed_out_at: at },
        { exceptDevice: { userId, deviceId } },
      );
    } catch (err) {
      this.d.log.error("device_signed_out notice failed", { err });
    }
    return ok({ at });
  }
}
