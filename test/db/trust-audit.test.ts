/**
 * trust_audit (spec §2.10, §7.8): append-only by the database's own triggers,
 * whoever writes SQL; both lookups answered from an index (plans read with
 * EXPLAIN on a table large enough that the planner would rather not scan it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { trustAudit } from "../../src/db/schema/index.ts";
import { explainPlan, freshStore, storeKinds, type TestStore } from "../support/stores.ts";

for (const kind of storeKinds()) {
  describe(`trust_audit [${kind}]`, () => {
    let t: TestStore;
    beforeAll(async () => {
      t = await freshStore(kind);
      // 20,000 events: 2,000 actors, 4,000 target devices.
      await t.store.db.execute(sql`insert into trust_audit
        (id, actor_uid, actor_device_id, target_uid, target_device_id, target_ed25519, from_state, to_state, method, actor_signature, ts)
        select g, 1000 + g % 2000, 'd', 5000 + g % 4000, 'dev' || (g % 2), 'k', 'unverified', 'verified', 'qr_scan', 's', g
        from generate_series(1, 20000) g`);
      await t.store.db.execute(sql`analyze trust_audit`);
    }, 60_000);
    afterAll(() => t.dispose());

    const refused = async (statement: ReturnType<typeof sql>) => {
      const err = await t.store.db.execute(statement).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err).toBeDefined();
      const text = `${err!.message} ${(err as { cause?: Error }).cause?.message ?? ""}`;
      expect(text).toContain("trust_audit is append-only");
    };

    test("UPDATE, DELETE and TRUNCATE are refused by the database, even when they match no row", async () => {
      await refused(sql`update trust_audit set to_state = 'revoked' where id = 1`);
      await refused(sql`update trust_audit set to_state = 'revoked' where false`);
      await refused(sql`delete from trust_audit where id = 1`);
      await refused(sql`delete from trust_audit`);
      await refused(sql`truncate trust_audit`);
      const [row] = await t.store.rows<{ n: number; state: string }>(
        sql`select (select count(*)::int from trust_audit) as n, (select to_state from trust_audit where id = 1) as state`,
      );
      expect(row).toEqual({ n: 20000, state: "verified" });
    });

    test("inserting is allowed (the table is append-only, not read-only)", async () => {
      await t.store.db.insert(trustAudit).values({
        id: 99_999n, actorUid: 1n, actorDeviceId: "a", targetUid: 2n, targetDeviceId: "b", targetEd25519: "k",
        fromState: "unverified", toState: "revoked", method: "revoke", actorSignature: "s", ts: 1,
      });
      const [row] = await t.store.rows<{ created: boolean }>(sql`select created_at is not null as created from trust_audit where id = 99999`);
      expect(row?.created).toBe(true);
    });

    const plan = (where: ReturnType<typeof sql>) => explainPlan(t.store, sql`select * from trust_audit where ${where}`);

    test("lookup by (target_uid, target_device_id) uses trust_audit_target_idx", async () => {
      const p = await plan(sql`target_uid = 5007 and target_device_id = 'dev1'`);
      expect(p).toContain("trust_audit_target_idx");
      expect(p).not.toContain("Seq Scan");
    });

    test("lookup by actor_uid uses trust_audit_actor_idx", async () => {
      const p = await plan(sql`actor_uid = 1007`);
      expect(p).toContain("trust_audit_actor_idx");
      expect(p).not.toContain("Seq Scan");
    });
  });
}
