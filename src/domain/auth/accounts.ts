import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import { userDevices, users } from "../../db/schema/index.ts";
import type { Store } from "../../db/store.ts";
import type { IdGenerator } from "../../ids/tsid.ts";
import { fail, ok, type Result } from "../errors.ts";
import { inThread } from "../../db/batch-load.ts";
import { AccountLiveness } from "./liveness.ts";
import { DeviceSessions } from "./sessions.ts";
import type { TokenService } from "./tokens.ts";
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


/** The answer to a suspended account's login (docs/accounts.md). */
export const SUSPENDED = "account suspended";

/**
 * How long the check behind every token trusts a session it found live (one
 * to two of these): every revocation drops the entries at once on every node
 * (bus `invalidate`), so this only bounds what a node cut off from the bus
 * misses; long enough that a reconnect storm reads each session once.
 */
export const LIVENESS_TTL_MS = 30_000;

/**
 * Session checks in flight at once on PostgreSQL: a handshake arriving while one runs goes out beside it instead of
 * waiting for it to end (handshakes/s in `bench connections` ~0.75× → ~0.78× raw, bench/FINDINGS.md 2026-11-28 fifth).
 * PGlite runs one statement at a time in the node's thread: one.
 */
const LIVENESS_DEPTH = 3;

/** Users and their devices (spec §2.10): sign-up, login, liveness. No transport here. */
export class Accounts {
  /** The check behind every token (REST and handshake): batched, remembered briefly (liveness.ts). */
  readonly liveness: AccountLiveness;
  /** Device sessions: token generations, refresh rotation, revocation (sessions.ts). */
  readonly sessions: DeviceSessions;
  private readonly db: Store["db"];

  constructor(
    store: Store,
    tokens: TokenService,
    private readonly ids: IdGenerator,
    private readonly now: () => number,
    private readonly passwordMemoryKib = DEFAULT_MEMORY_KIB,
  ) {
    this.db = store.db;
    this.sessions = new DeviceSessions(store, tokens, now);
    const depth = store.kind === "postgres" ? LIVENESS_DEPTH : 1;
    this.liveness = new AccountLiveness(this.sessions, LIVENESS_TTL_MS, now, inThread(store), depth);
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
      .select({ id: users.id, account: users.account, nickname: users.nickname, hash: users.passwordHash, suspendedAt: users.suspendedAt })
      .from(users)
      .where(and(eq(users.account, normaliseAccount(input.account)), isNull(users.deletedAt)));
    const good = await verifyOrDummy(input.pwd, user?.hash, this.passwordMemoryKib);
    if (!user || !good) return fail("unauthorized", BAD_CREDENTIALS);
    // Said only to whoever knows the password: a suspension is no secret from the account's owner.
    if (user.suspendedAt !== null) return fail("account_suspended", SUSPENDED);
    await this.touchDevice(user.id, device);
    return ok({ userId: user.id, account: user.account, nickname: user.nickname });
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
