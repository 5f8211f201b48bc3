import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import { userDevices, users } from "../../db/schema/index.ts";
import type { Db } from "../../db/store.ts";
import type { IdGenerator } from "../../ids/tsid.ts";
import { fail, ok, type Result } from "../errors.ts";
import { AccountLiveness } from "./liveness.ts";
import { DEFAULT_MEMORY_KIB, hashPassword, verifyOrDummy } from "./passwords.ts";
import { checkAccount, checkNickname, checkPassword, normaliseAccount } from "./rules.ts";

export interface Device {
  readonly deviceId: string;
  readonly deviceType: string;
}

export interface Account {
  readonly userId: bigint;
  readonly account: string;
  readonly nickname: string;
}

/** One generic answer for a wrong account, a wrong password and a deleted account. */
export const BAD_CREDENTIALS = "account or password is incorrect";


/**
 * How long the handshake's account check trusts an account it found live
 * (one to two of these): short beside the logout sweep's 10-minute cadence,
 * long enough that a reconnect storm reads each account once.
 */
export const LIVENESS_TTL_MS = 30_000;

/** Users and their devices (spec §2.10): sign-up, login, liveness. No transport here. */
export class Accounts {
  /** The WebSocket handshake's account check: batched, remembered briefly (liveness.ts). */
  readonly liveness: AccountLiveness;

  constructor(
    private readonly db: Db,
    private readonly ids: IdGenerator,
    private readonly now: () => number,
    private readonly passwordMemoryKib = DEFAULT_MEMORY_KIB,
  ) {
    this.liveness = new AccountLiveness(this, LIVENESS_TTL_MS, now);
  }

  async signup(input: { account: string; pwd: string; nickname?: string | undefined }, device: Device): Promise<Result<Account>> {
    const account = checkAccount(input.account);
    if (!account.ok) return account;
    const pwd = checkPassword(input.pwd);
    if (!pwd.ok) return pwd;
    const nickname = checkNickname(input.nickname, account.value);
    if (!nickname.ok) return nickname;
    const t = this.now();
    const row = {
      id: this.ids.next(),
      account: account.value,
      passwordHash: await hashPassword(pwd.value, this.passwordMemoryKib),
      nickname: nickname.value,
      createdAt: t,
      updatedAt: t,
    };
    const inserted = await this.db.insert(users).values(row).onConflictDoNothing().returning({ id: users.id });
    if (inserted.length === 0) return fail("conflict", "account is already registered");
    await this.touchDevice(row.id, device);
    return ok({ userId: row.id, account: row.account, nickname: row.nickname });
  }

  async login(input: { account: string; pwd: string }, device: Device): Promise<Result<Account>> {
    const [user] = await this.db
      .select({ id: users.id, account: users.account, nickname: users.nickname, hash: users.passwordHash })
      .from(users)
      .where(and(eq(users.account, normaliseAccount(input.account)), isNull(users.deletedAt)));
    const good = await verifyOrDummy(input.pwd, user?.hash, this.passwordMemoryKib);
    if (!user || !good) return fail("unauthorized", BAD_CREDENTIALS);
    await this.touchDevice(user.id, device);
    return ok({ userId: user.id, account: user.account, nickname: user.nickname });
  }

  /** The account behind a token still exists and is not deleted. */
  async isActive(userId: bigint): Promise<boolean> {
    const rows = await this.db
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.id, userId), isNull(users.deletedAt)));
    return rows.length === 1;
  }

  /** Which of `userIds` exist and are not deleted, in one query. */
  async liveAmong(userIds: readonly bigint[]): Promise<ReadonlySet<bigint>> {
    const rows = await this.db
      .select({ id: users.id })
      .from(users)
      .where(and(inArray(users.id, userIds as bigint[]), isNull(users.deletedAt)));
    return new Set(rows.map((r) => r.id));
  }

  /** Registers the device (X-Device-ID) or refreshes its last-seen time; a login without one records nothing. */
  private async touchDevice(userId: bigint, device: Device): Promise<void> {
    if (!device.deviceId) return;
    const t = this.now();
    await this.db
      .insert(userDevices)
      .values({ userId, deviceId: device.deviceId, deviceType: device.deviceType, createdAt: t, lastSeenAt: t })
      .onConflictDoUpdate({
        target: [userDevices.userId, userDevices.deviceId],
        set: {
          lastSeenAt: t,
          deviceType: sql`coalesce(nullif(excluded.device_type, ''), ${userDevices.deviceType})`,
        },
      });
  }
}
