import { and, asc, eq, inArray, type SQL } from "drizzle-orm";
import { e2eeProxyKeys, e2eeShards } from "../../db/schema/index.ts";
import { fromBase64, toBase64 } from "../../protocol/base64.ts";
import { RSA_OAEP_256, unseal } from "../../protocol/e2ee.ts";
import { fail, ok, type Result } from "../errors.ts";
import type { E2eeContext } from "./context.ts";

/** Column the proxy private keys are sealed for (bound into the field cipher's AEAD). */
const PRIVATE_KEY_COLUMN = "e2ee_proxy_key.private_key_sealed";
/** Largest encrypted shard accepted (Base64 text): a share of a key plus the sealed-box overhead, with room. */
export const MAX_SHARD_CHARS = 16 * 1024;
export const MIN_THRESHOLD = 2;
const ACTIVE = "active";
const SUPERSEDED = "superseded";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface CreateShardsInput {
  readonly key_version: number;
  readonly threshold: number;
  readonly shards: readonly { readonly proxy_uid: bigint; readonly encrypted_shard: string }[];
}

export type ShardRecord = Record<string, unknown>;

type Row = typeof e2eeShards.$inferSelect;

/** The wire form of a shard (§2.7): encrypted_shard canonical, encrypted_data the legacy alias of the same data. */
function record(r: Row): ShardRecord {
  const data = r.encryptedShard || r.encryptedData || "";
  return {
    shard_id: r.shardId,
    owner_uid: r.ownerUid,
    key_version: r.keyVersion,
    proxy_uid: r.proxyUid,
    set_id: r.setId,
    threshold: r.threshold,
    total: r.total,
    status: r.status,
    encrypted_shard: data,
    encrypted_data: data,
    created_at: r.createdAt,
  };
}

/**
 * Social-recovery shards (spec §2.7, §4.4, §7.5; design in docs/e2ee.md).
 * Each proxy has a server-held RSA-OAEP-256 key pair whose private half is
 * sealed with the field key; the owner's SDK seals one share per proxy to that
 * public key, and decrypt_shard opens it for the proxy only.
 */
export class Shards {
  constructor(private readonly ctx: E2eeContext) {}

  /** The proxy public keys (Base64 SPKI) of some of the caller's friends, made on first request. */
  async proxyKeys(me: bigint, uids: readonly bigint[]): Promise<Result<{ user_id: bigint; public_key: string }[]>> {
    const wanted = [...new Set(uids)];
    if (wanted.length === 0 || wanted.length > this.ctx.config.e2eeMaxProxies) {
      return fail("bad_request", `user_ids must name 1 to ${this.ctx.config.e2eeMaxProxies} users`);
    }
    const refused = await this.notFriends(me, wanted);
    if (refused) return fail("not_a_friend", `user ${refused} is not your friend`);
    const have = new Map(
      (await this.ctx.db.select({ userId: e2eeProxyKeys.userId, publicKey: e2eeProxyKeys.publicKey }).from(e2eeProxyKeys).where(inArray(e2eeProxyKeys.userId, wanted))).map(
        (r) => [r.userId, r.publicKey],
      ),
    );
    const missing = wanted.filter((u) => !have.has(u));
    if (missing.length) {
      const made = await Promise.all(missing.map((u) => this.makeKey(u)));
      await this.ctx.db.insert(e2eeProxyKeys).values(made).onConflictDoNothing();
      // A concurrent request may have stored another key first: answer what is stored.
      const rows = await this.ctx.db.select({ userId: e2eeProxyKeys.userId, publicKey: e2eeProxyKeys.publicKey }).from(e2eeProxyKeys).where(inArray(e2eeProxyKeys.userId, missing));
      for (const r of rows) have.set(r.userId, r.publicKey);
    }
    return ok(wanted.map((u) => ({ user_id: u, public_key: have.get(u)! })));
  }

  private async makeKey(userId: bigint) {
    const pair = await crypto.subtle.generateKey(
      { ...RSA_OAEP_256, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
      true,
      ["encrypt", "decrypt"],
    );
    const spki = new Uint8Array(await crypto.subtle.exportKey("spki", pair.publicKey));
    const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
    const sealed = await this.ctx.fields.seal(PRIVATE_KEY_COLUMN, pkcs8);
    pkcs8.fill(0);
    return { userId, publicKey: toBase64(spki), privateKeySealed: sealed, createdAt: this.ctx.now() };
  }

  /** The first of `uids` that is the caller or not a friend of the caller; undefined when all are friends. */
  private async notFriends(me: bigint, uids: readonly bigint[]): Promise<bigint | undefined> {
    for (const u of uids) if (u === me || !(await this.ctx.facts.relation(me, u)).friend) return u;
    return undefined;
  }

  /**
   * A new set of shards for the caller's key `key_version`: threshold ≥ 2 and ≤ the number of shards, one shard
   * per distinct friend, at most IBIS_E2EE_MAX_PROXIES. Earlier active shards of the same key version are superseded.
   */
  async create(me: bigint, input: CreateShardsInput): Promise<Result<{ set_id: string; key_version: number; threshold: number; shards: ShardRecord[] }>> {
    const { threshold, shards } = input;
    const max = this.ctx.config.e2eeMaxProxies;
    if (shards.length < MIN_THRESHOLD || shards.length > max) return fail("bad_request", `shards must name ${MIN_THRESHOLD} to ${max} proxies`);
    if (threshold < MIN_THRESHOLD || threshold > shards.length) return fail("bad_request", `threshold must be between ${MIN_THRESHOLD} and the number of shards`);
    const proxies = shards.map((s) => s.proxy_uid);
    if (new Set(proxies).size !== proxies.length) return fail("bad_request", "each proxy may hold one shard of a set");
    for (const s of shards) {
      const box = fromBase64(s.encrypted_shard);
      if (!box || box.length < 2 + 12 + 16 || s.encrypted_shard.length > MAX_SHARD_CHARS) {
        return fail("bad_request", "encrypted_shard must be Base64 of a sealed box (docs/e2ee.md)");
      }
    }
    const refused = await this.notFriends(me, proxies);
    if (refused) return fail("not_a_friend", `proxy ${refused} is not your friend`);
    const keys = await this.ctx.db.select({ userId: e2eeProxyKeys.userId }).from(e2eeProxyKeys).where(inArray(e2eeProxyKeys.userId, proxies));
    if (keys.length !== proxies.length) return fail("bad_request", "fetch each proxy's public key (proxy_keys) before creating shards");

    const setId = crypto.randomUUID();
    const t = this.ctx.now();
    const rows = shards.map((s) => ({
      shardId: crypto.randomUUID(),
      ownerUid: me,
      keyVersion: input.key_version,
      proxyUid: s.proxy_uid,
      setId,
      threshold,
      total: shards.length,
      status: ACTIVE,
      encryptedShard: s.encrypted_shard,
      createdAt: t,
    }));
    const stored = await this.ctx.db.transaction(async (tx) => {
      await tx
        .update(e2eeShards)
        .set({ status: SUPERSEDED })
        .where(and(eq(e2eeShards.ownerUid, me), eq(e2eeShards.keyVersion, input.key_version), eq(e2eeShards.status, ACTIVE)));
      return tx.insert(e2eeShards).values(rows).returning();
    });
    return ok({ set_id: setId, key_version: input.key_version, threshold, shards: stored.map(record) });
  }

  /** The caller's own shards of one key version, every status, oldest first. */
  own(me: bigint, keyVersion: number): Promise<ShardRecord[]> {
    return this.list(and(eq(e2eeShards.ownerUid, me), eq(e2eeShards.keyVersion, keyVersion))!);
  }

  /** Active shards the caller holds as proxy. */
  held(me: bigint): Promise<ShardRecord[]> {
    return this.list(and(eq(e2eeShards.proxyUid, me), eq(e2eeShards.status, ACTIVE))!);
  }

  private async list(where: SQL): Promise<ShardRecord[]> {
    const rows = await this.ctx.db.select().from(e2eeShards).where(where).orderBy(asc(e2eeShards.createdAt), asc(e2eeShards.shardId));
    return rows.map(record);
  }

  /** decrypt_shard with the error table of spec §7.5, in its order. */
  async decrypt(me: bigint, shardId: string | undefined): Promise<Result<{ decrypted_shard: string }>> {
    if (!shardId) return fail("bad_request", "missing shard_id parameter");
    // A malformed id names no shard (and must not reach the uuid column as a cast error).
    if (!UUID.test(shardId)) return fail("not_found", "shard does not exist");
    const [shard] = await this.ctx.db.select().from(e2eeShards).where(eq(e2eeShards.shardId, shardId));
    if (!shard) return fail("not_found", "shard does not exist");
    if (shard.proxyUid !== me) return fail("forbidden", "not allowed to decrypt this shard");
    if (shard.status !== ACTIVE) return fail("bad_request", "shard unavailable");
    const data = shard.encryptedShard || shard.encryptedData;
    if (!data) return fail("internal", "shard data missing");
    const [key] = await this.ctx.db.select({ sealed: e2eeProxyKeys.privateKeySealed }).from(e2eeProxyKeys).where(eq(e2eeProxyKeys.userId, me));
    if (!key) return fail("e2ee_key_not_found", "key does not exist");
    const pkcs8 = await this.ctx.fields.open(PRIVATE_KEY_COLUMN, key.sealed);
    if (!pkcs8) {
      // The field key changed or the row is damaged: an operator problem, not the caller's (never log the key).
      this.ctx.log.error("proxy private key does not open with the field key", { userId: me });
      return fail("internal", "operation failed, retry later");
    }
    const privateKey = await crypto.subtle.importKey("pkcs8", pkcs8, RSA_OAEP_256, false, ["decrypt"]);
    pkcs8.fill(0);
    const box = fromBase64(data);
    const plain = box && (await unseal(privateKey, box));
    if (!plain) return fail("e2ee_decryption_failed", "decryption failed");
    return ok({ decrypted_shard: new TextDecoder().decode(plain) });
  }
}
