import { eq } from "drizzle-orm";
import { admins } from "../../db/schema/index.ts";
import type { Db } from "../../db/store.ts";
import type { IdGenerator } from "../../ids/tsid.ts";
import { DEFAULT_MEMORY_KIB, hashPassword, verifyOrDummy } from "../auth/passwords.ts";
import { fail, ok, type Result } from "../errors.ts";
import { normaliseAccount } from "../auth/rules.ts";
import type { Role } from "./roles.ts";

export interface Admin {
  readonly id: bigint;
  readonly account: string;
  readonly role: string;
}


/** Admin console accounts (table admin_user). */
export class Admins {
  constructor(
    private readonly db: Db,
    private readonly ids: IdGenerator,
    private readonly now: () => number,
    private readonly passwordMemoryKib = DEFAULT_MEMORY_KIB,
  ) {}

  /**
   * Creates the first admin (role superadmin) from config when no admin has
   * that account yet. An existing account is left alone: the config password
   * seeds the console, it does not reset a password changed since.
   */
  async ensure(account: string, password: string, role: Role = "superadmin"): Promise<boolean> {
    const rows = await this.db
      .insert(admins)
      .values({ id: this.ids.next(), account: normaliseAccount(account), passwordHash: await hashPassword(password, this.passwordMemoryKib), role, createdAt: this.now() })
      .onConflictDoNothing()
      .returning({ id: admins.id });
    return rows.length === 1;
  }

  async login(account: string, password: string): Promise<Result<Admin>> {
    const [row] = await this.db.select().from(admins).where(eq(admins.account, normaliseAccount(account)));
    const good = await verifyOrDummy(password, row?.passwordHash, this.passwordMemoryKib);
    if (!row || !good) return fail("unauthorized", "account or password is incorrect");
    return ok({ id: row.id, account: row.account, role: row.role });
  }

  async find(id: bigint): Promise<Admin | undefined> {
    const [row] = await this.db
      .select({ id: admins.id, account: admins.account, role: admins.role })
      .from(admins)
      .where(eq(admins.id, id));
    return row;
  }
}
