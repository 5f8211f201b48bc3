import { index, integer, pgTable, primaryKey, smallint, text, timestamp, uuid, varchar } from "drizzle-orm/pg-core";
import { id, ms, nowMs } from "./columns.ts";

/**
 * The published keys of one device (docs/e2ee.md): identity (ed25519),
 * key agreement (curve25519) and the RSA-OAEP-256 key messages are wrapped
 * to (§2.8), self-signed. The device itself is user_device's row.
 * `last_event_ts` is the newest trust-event ts accepted from this device:
 * the replay check.
 */
export const e2eeDeviceKeys = pgTable(
  "e2ee_device_key",
  {
    userId: id("user_id").notNull(),
    deviceId: text("device_id").notNull(),
    ed25519: text("ed25519").notNull(),
    curve25519: text("curve25519").notNull(),
    wrapKey: text("wrap_key").notNull(),
    keySignature: text("key_signature").notNull(),
    keyVersion: integer("key_version").notNull(),
    lastEventTs: ms("last_event_ts").notNull().default(0),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
    updatedAt: ms("updated_at").notNull().$defaultFn(nowMs),
  },
  (t) => [primaryKey({ columns: [t.userId, t.deviceId] })],
);

/**
 * trust_audit (spec §2.10): append-only, enforced by triggers in the custom
 * migration (UPDATE, DELETE and TRUNCATE raise). `actor_device_id` and `ts`
 * are kept beside the listed fields so every row's signature can be checked again.
 */
export const trustAudit = pgTable(
  "trust_audit",
  {
    id: id("id").primaryKey(),
    actorUid: id("actor_uid").notNull(),
    actorDeviceId: varchar("actor_device_id", { length: 128 }).notNull(),
    targetUid: id("target_uid").notNull(),
    targetDeviceId: varchar("target_device_id", { length: 128 }).notNull(),
    targetEd25519: text("target_ed25519").notNull(),
    fromState: varchar("from_state", { length: 20 }).notNull(),
    toState: varchar("to_state", { length: 20 }).notNull(),
    method: varchar("method", { length: 40 }).notNull(),
    actorSignature: text("actor_signature").notNull(),
    ts: ms("ts").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("trust_audit_target_idx").on(t.targetUid, t.targetDeviceId),
    index("trust_audit_actor_idx").on(t.actorUid),
  ],
);

/**
 * A user's social-recovery proxy key (docs/e2ee.md): RSA-OAEP-256, made by the
 * server the first time someone asks for it; the private half (PKCS#8) is
 * sealed with the field key (src/crypto/fields.ts).
 */
export const e2eeProxyKeys = pgTable("e2ee_proxy_key", {
  userId: id("user_id").primaryKey(),
  publicKey: text("public_key").notNull(),
  privateKeySealed: text("private_key_sealed").notNull(),
  createdAt: ms("created_at").notNull().$defaultFn(nowMs),
});

/** Social-recovery shards (spec §2.7, §4.4): one row per proxy of a created set. */
export const e2eeShards = pgTable(
  "e2ee_shard",
  {
    shardId: uuid("shard_id").primaryKey(),
    ownerUid: id("owner_uid").notNull(),
    keyVersion: integer("key_version").notNull(),
    proxyUid: id("proxy_uid").notNull(),
    /** The shards made together share a set id; threshold and total describe the set. */
    setId: uuid("set_id").notNull(),
    threshold: smallint("threshold").notNull(),
    total: smallint("total").notNull(),
    /** active; superseded when the owner creates a new set for the same key version. */
    status: text("status").notNull().default("active"),
    encryptedShard: text("encrypted_shard"),
    /** Legacy name of the same data, read when encrypted_shard is empty (§4.4 rule 3). */
    encryptedData: text("encrypted_data"),
    createdAt: ms("created_at").notNull().$defaultFn(nowMs),
  },
  (t) => [
    index("e2ee_shard_owner_idx").on(t.ownerUid, t.keyVersion),
    index("e2ee_shard_proxy_idx").on(t.proxyUid, t.status),
  ],
);
