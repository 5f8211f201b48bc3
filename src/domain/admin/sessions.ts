import { createHash, randomBytes } from "node:crypto";
import { and, eq, gt, lte } from "drizzle-orm";
import { adminSessions, admins } from "../../db/schema/index.ts";
import type { Db } from "../../db/store.ts";
import type { Admin } from "./admins.ts";

const hashOf = (id: string) => createHash("sha256").update(id).digest("base64url");

/**
 * Admin console sessions kept server-side (docs/auth.md "Admin console"): the
 * cookie carries a random 256-bit id, the table its SHA-256 and expiry.
 * Logout deletes the row, so a copied cookie stops working with it.
 */
export class AdminSessions {
  constructor(
    private readonly db: Db,
    private readonly now: () => number,
  ) {}

  /** A new session; returns the id for the cookie. Expired rows are cleared on the way (logins are rare). */
  async start(adminId: bigint, expiresAt: number): Promise<string> {
    const id = randomBytes(32).toString("base64url");
    const t = this.now();
    await this.db.delete(adminSessions).where(lte(adminSessions.expiresAt, t));
    await this.db.insert(adminSessions).values({ idHash: hashOf(id), adminId, createdAt: t, expiresAt });
    return id;
  }

  /** The admin of a live session; undefined when unknown, ended or expired. One query. */
  async find(id: string): Promise<Admin | undefined> {
    const [row] = await this.db
      .select({ id: admins.id, account: admins.account, role: admins.role })
      .from(adminSessions)
      .innerJoin(admins, eq(admins.id, adminSessions.adminId))
      .where(and(eq(adminSessions.idHash, hashOf(id)), gt(adminSessions.expiresAt, this.now())));
    return row;
  }

  async end(id: string): Promise<void> {
    await this.db.delete(adminSessions).where(eq(adminSessions.idHash, hashOf(id)));
  }
}
