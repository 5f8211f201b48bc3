import { and, eq } from "drizzle-orm";
import type { Config } from "../../config/index.ts";
import type { FieldCipher } from "../../crypto/fields.ts";
import { userDevices } from "../../db/schema/index.ts";
import type { Db } from "../../db/store.ts";
import type { Notifier } from "../../delivery/ports.ts";
import type { IdGenerator } from "../../ids/tsid.ts";
import type { Logger } from "../../log.ts";
import type { SocialFacts } from "../social/facts.ts";

/** What the E2EE services hold: storage, ids, clock, the notifier, the friendship facts and the field cipher. */
export interface E2eeContext {
  readonly db: Db;
  readonly ids: IdGenerator;
  readonly now: () => number;
  readonly log: Logger;
  readonly notifier: Notifier;
  readonly facts: Pick<SocialFacts, "relation" | "friendsOf">;
  readonly fields: FieldCipher;
  readonly config: Pick<Config, "e2eeTrustWindowMs" | "e2eeMaxProxies">;
}

export { isRetired } from "../../delivery/inbox.ts";
/** user_device.status of a device its owner destroyed (spec §2.10). */
export const DESTROYED = -1;

/** The device's user_device row: undefined when it is not registered. */
export async function deviceRow(db: Db, userId: bigint, deviceId: string) {
  const [row] = await db
    .select({ status: userDevices.status, trustState: userDevices.trustState, deviceType: userDevices.deviceType })
    .from(userDevices)
    .where(and(eq(userDevices.userId, userId), eq(userDevices.deviceId, deviceId)));
  return row;
}

/** Is `me` allowed to read `other`'s device keys and name them in trust events: themselves or a friend. */
export async function mayWatch(ctx: E2eeContext, me: bigint, other: bigint): Promise<boolean> {
  return me === other || (await ctx.facts.relation(me, other)).friend;
}
