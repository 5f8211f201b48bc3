/**
 * The E2EE REST area over HTTP on both stores: key registration checks,
 * social-recovery shards end to end through the SDK (create, list, decrypt by
 * each proxy, recombine), every row of the decrypt_shard error table (§7.5),
 * the feature switch and the per-user throttle.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FieldCipher } from "../../src/crypto/fields.ts";
import { IbisApi } from "../../src/client/rest.ts";
import { combineShares, E2eeClient, generateIdentity, signedBundle } from "../../src/client/e2ee/index.ts";
import { e2eeProxyKeys, e2eeShards } from "../../src/db/schema/index.ts";
import { fromBase64, toBase64 } from "../../src/protocol/base64.ts";
import { importWrapKey, seal } from "../../src/protocol/e2ee.ts";
import { befriend, signup, type Account } from "../e2e/support.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";

const MAX_PROXIES = 4;

for (const kind of storeKinds()) {
  describe(`E2EE over HTTP [${kind}]`, () => {
    let node: TestNode;
    let alice: Account, bob: Account, carol: Account, erin: Account, dave: Account;
    const sdk = (who: Account, device = Object.keys(who.tokens)[0]!) =>
      generateIdentity(who.userId, device).then((id) => new E2eeClient(id, new IbisApi({ url: node.url, token: who.tokens[device]! })));
    const call = async (who: Account, method: string, path: string, body?: unknown) =>
      (await api(node, method, path, { token: Object.values(who.tokens)[0], body })).body;
    const decrypt = (who: Account, body: unknown) => call(who, "POST", "/api/v1/e2ee/social/decrypt_shard", body);
    const insertShard = async (proxy: bigint, data: { encryptedShard?: string | null; encryptedData?: string | null; status?: string }) => {
      const shardId = crypto.randomUUID();
      await node.services.store.db.insert(e2eeShards).values({
        shardId, ownerUid: alice.userId, keyVersion: 9, proxyUid: proxy, setId: crypto.randomUUID(), threshold: 2, total: 2, ...data,
      });
      return shardId;
    };
    /** A sealed box to `who`'s proxy key (as the SDK makes one). */
    const sealFor = async (who: Account, text: string) => {
      const { list } = (await call(alice, "GET", `/api/v1/e2ee/social/proxy_keys?user_ids=${who.userId}`)).payload;
      return toBase64(await seal((await importWrapKey(list[0].public_key))!, new TextEncoder().encode(text)));
    };

    beforeAll(async () => {
      node = await startTestNode(kind, { e2eeMaxProxies: MAX_PROXIES });
      [alice, bob, carol, erin, dave] = (await Promise.all(["alice", "bob", "carol", "erin", "dave"].map((n) => signup(node, n, [`${n}-1`])))) as [Account, Account, Account, Account, Account];
      for (const f of [bob, carol, erin, dave]) await befriend(node, alice, f);
    }, 60_000);
    afterAll(() => node.stop());

    describe("device keys", () => {
      test("the bundle must be signed by its own identity key, with a usable wrap key, from a named device", async () => {
        const id = await generateIdentity(alice.userId, "alice-1");
        const good = await signedBundle(id);
        const other = await signedBundle(await generateIdentity(alice.userId, "alice-1"));
        const post = (body: unknown, who = alice) => call(who, "POST", "/api/v1/e2ee/device_keys", body);
        expect(await post({ ...good, key_signature: other.key_signature })).toMatchObject({ code: 400, msg: "key_signature does not verify with ed25519" });
        expect(await post({ ...good, wrap_key: good.curve25519 })).toMatchObject({ code: 400 });
        expect(await post({ ...good, ed25519: "AAAA" })).toMatchObject({ code: 400, msg: "ed25519 must be Base64 of 32 bytes" });
        expect(await post({ ed25519: good.ed25519 })).toMatchObject({ code: 400 });
        // The bundle names the device: alice-1's signed bundle does not register for bob's device.
        expect(await post(good, bob)).toMatchObject({ code: 400, msg: "key_signature does not verify with ed25519" });
        const { token } = await node.services.tokens.pair(alice.userId, "");
        expect((await api(node, "POST", "/api/v1/e2ee/device_keys", { token, body: good })).body.code).toBe(400);
        expect(await post(good)).toMatchObject({ code: 0, payload: { key_version: 1, identity_changed: false } });
        expect(await call(alice, "GET", `/api/v1/e2ee/devices?user_id=abc`)).toMatchObject({ code: 400 });
      });
    });

    describe("social-recovery shards", () => {
      test("create 2-of-3, list own and held shards, each proxy decrypts its share, two shares give the secret back", async () => {
        const secret = crypto.getRandomValues(new Uint8Array(32));
        const owner = await sdk(alice);
        const made = await owner.createShards(secret, 1, 2, [bob.userId, carol.userId, erin.userId]);
        expect(made).toMatchObject({ key_version: 1, threshold: 2 });
        expect(made.shards).toHaveLength(3);
        const own = (await owner.ownShards(1)).list;
        expect(new Set(own.map((s) => s.proxy_uid))).toEqual(new Set([bob.userId, carol.userId, erin.userId]));
        expect(own.every((s) => s.status === "active" && s.threshold === 2 && s.total === 3 && s.set_id === made.set_id)).toBe(true);
        expect(own.every((s) => s.encrypted_shard === s.encrypted_data && s.encrypted_shard.length > 0)).toBe(true);
        expect((await owner.ownShards(2)).list).toEqual([]);

        const shares: Uint8Array[] = [];
        for (const proxy of [bob, erin]) {
          const held = (await (await sdk(proxy)).proxyShards()).list;
          expect(held.map((s) => s.owner_uid)).toEqual([alice.userId]);
          shares.push(fromBase64(await (await sdk(proxy)).decryptShard(held[0]!.shard_id))!);
        }
        expect(toBase64(combineShares(shares))).toBe(toBase64(secret));
      });

      test("creation checks threshold ≥ 2, ≤ shards, proxies distinct friends with keys, at most IBIS_E2EE_MAX_PROXIES", async () => {
        const box = await sealFor(bob, "x");
        const boxC = await sealFor(carol, "x");
        const create = (body: Record<string, unknown>) => call(alice, "POST", "/api/v1/e2ee/social/create_shards", { key_version: 3, ...body });
        const two = [{ proxy_uid: bob.userId, encrypted_shard: box }, { proxy_uid: carol.userId, encrypted_shard: boxC }];
        expect(await create({ threshold: 1, shards: two })).toMatchObject({ code: 400, msg: "threshold must be between 2 and the number of shards" });
        expect(await create({ threshold: 3, shards: two })).toMatchObject({ code: 400 });
        expect(await create({ threshold: 2, shards: [two[0], two[0]] })).toMatchObject({ code: 400, msg: "each proxy may hold one shard of a set" });
        expect(await create({ threshold: 2, shards: [two[0]] })).toMatchObject({ code: 400, msg: `shards must name 2 to ${MAX_PROXIES} proxies` });
        const many = Array.from({ length: MAX_PROXIES + 1 }, (_, i) => ({ proxy_uid: BigInt(i + 1), encrypted_shard: box }));
        expect(await create({ threshold: 2, shards: many })).toMatchObject({ code: 400 });
        expect(await create({ threshold: 2, shards: [two[0], { proxy_uid: alice.userId, encrypted_shard: box }] })).toMatchObject({ code: 941 });
        const stranger = await signup(node, "frank", ["frank-1"]);
        expect(await create({ threshold: 2, shards: [two[0], { proxy_uid: stranger.userId, encrypted_shard: box }] })).toMatchObject({ code: 941 });
        expect(await create({ threshold: 2, shards: [two[0], { proxy_uid: carol.userId, encrypted_shard: "not base64!" }] })).toMatchObject({ code: 400 });
        // dave never had a proxy key made: the owner must fetch it (and seal to it) first.
        expect(await create({ threshold: 2, shards: [two[0], { proxy_uid: dave.userId, encrypted_shard: box }] })).toMatchObject({
          code: 400,
          msg: "fetch each proxy's public key (proxy_keys) before creating shards",
        });
        expect(await call(alice, "GET", `/api/v1/e2ee/social/proxy_keys?user_ids=${stranger.userId}`)).toMatchObject({ code: 941 });
        expect(await call(alice, "GET", `/api/v1/e2ee/social/shards?key_version=0`)).toMatchObject({ code: 400 });
        expect((await call(alice, "GET", `/api/v1/e2ee/social/shards?key_version=3`)).payload.list).toEqual([]);
      });

      test("decrypt_shard answers every row of the §7.5 table", async () => {
        const [first] = (await call(bob, "GET", "/api/v1/e2ee/social/proxy_shards")).payload.list;
        // shard_id missing
        expect(await decrypt(bob, {})).toMatchObject({ code: 400, msg: "missing shard_id parameter" });
        expect(await decrypt(bob, { shard_id: "" })).toMatchObject({ code: 400, msg: "missing shard_id parameter" });
        // caller is not the proxy (the owner included)
        expect(await decrypt(carol, { shard_id: first.shard_id })).toMatchObject({ code: 403, msg: "not allowed to decrypt this shard" });
        expect(await decrypt(alice, { shard_id: first.shard_id })).toMatchObject({ code: 403, msg: "not allowed to decrypt this shard" });
        // shard not found (well-formed and malformed ids)
        expect(await decrypt(bob, { shard_id: crypto.randomUUID() })).toMatchObject({ code: 404, msg: "shard does not exist" });
        expect(await decrypt(bob, { shard_id: "1; drop table e2ee_shard" })).toMatchObject({ code: 404, msg: "shard does not exist" });
        // shard not active: a new set for the same key version supersedes the old one
        const owner = await sdk(alice);
        await owner.createShards(new Uint8Array([1, 2, 3]), 1, 2, [bob.userId, carol.userId]);
        expect(await decrypt(bob, { shard_id: first.shard_id })).toMatchObject({ code: 400, msg: "shard unavailable" });
        expect((await owner.ownShards(1)).list.filter((s) => s.status === "active")).toHaveLength(2);
        // both encrypted_shard and encrypted_data empty
        expect(await decrypt(bob, { shard_id: await insertShard(bob.userId, { encryptedShard: null, encryptedData: "" }) })).toMatchObject({
          code: 500,
          msg: "shard data missing",
        });
        // private key not found: the proxy has no proxy key
        const noKey = await insertShard(dave.userId, { encryptedShard: await sealFor(bob, "x") });
        expect(await decrypt(dave, { shard_id: noKey })).toMatchObject({ code: 5054, msg: "key does not exist" });
        // decryption fails: sealed to another proxy's key, or not a sealed box at all
        expect(await decrypt(bob, { shard_id: await insertShard(bob.userId, { encryptedShard: await sealFor(carol, "x") }) })).toMatchObject({
          code: 5053,
          msg: "decryption failed",
        });
        expect(await decrypt(bob, { shard_id: await insertShard(bob.userId, { encryptedShard: "AAAA" }) })).toMatchObject({ code: 5053 });
        // any other error: the stored private key does not open with this server's field key
        const wrongField = await FieldCipher.fromSecret("another field key");
        await node.services.store.db.insert(e2eeProxyKeys).values({
          userId: dave.userId, publicKey: "x", privateKeySealed: await wrongField.seal("e2ee_proxy_key.private_key_sealed", new Uint8Array(8)),
        });
        expect(await decrypt(dave, { shard_id: noKey })).toMatchObject({ code: 500, msg: "operation failed, retry later" });
      });

      test("encrypted_shard is read first, then the legacy encrypted_data", async () => {
        const legacy = await insertShard(bob.userId, { encryptedShard: null, encryptedData: await sealFor(bob, "legacy share") });
        expect(await decrypt(bob, { shard_id: legacy })).toMatchObject({ code: 0, payload: { decrypted_shard: "legacy share" } });
        const both = await insertShard(bob.userId, { encryptedShard: await sealFor(bob, "canonical share"), encryptedData: "AAAA" });
        expect(await decrypt(bob, { shard_id: both })).toMatchObject({ code: 0, payload: { decrypted_shard: "canonical share" } });
        const listed = (await call(bob, "GET", "/api/v1/e2ee/social/proxy_shards")).payload.list.find((s: any) => s.shard_id === legacy);
        expect(listed.encrypted_shard).toBe(listed.encrypted_data);
      });

      test("the proxy private key is stored sealed, never as PKCS#8", async () => {
        const rows = await node.services.store.db.select().from(e2eeProxyKeys);
        const fields = await FieldCipher.fromSecret(node.services.secrets.fieldKey);
        let opened = 0;
        for (const r of rows) {
          expect(r.privateKeySealed.startsWith("f1.")).toBe(true);
          // dave's row was sealed with another field key (the test above); every other one opens.
          const plain = await fields.open("e2ee_proxy_key.private_key_sealed", r.privateKeySealed);
          if (!plain) continue;
          opened++;
          await crypto.subtle.importKey("pkcs8", plain, { name: "RSA-OAEP", hash: "SHA-256" }, false, ["decrypt"]);
          // No stretch of the key's PKCS#8 text is stored (a fixed "MII" could occur in random Base64 by chance).
          const der = toBase64(plain);
          for (let at = 0; at + 32 <= der.length; at += 256) expect(r.privateKeySealed).not.toContain(der.slice(at, at + 32));
        }
        expect(opened).toBeGreaterThan(2);
      });
    });
  });
}

describe("E2EE switches [pglite]", () => {
  test("the feature matrix turning e2ee off closes the whole area", async () => {
    const node = await startTestNode("pglite", { features: '{"e2ee":{"enabled":false}}' });
    try {
      const a = await signup(node, "solo", ["s1"]);
      for (const [method, path] of [["GET", "/api/v1/e2ee/devices"], ["POST", "/api/v1/e2ee/trust_event"], ["GET", "/api/v1/e2ee/social/proxy_shards"], ["POST", "/api/v1/e2ee/social/decrypt_shard"]]) {
        expect((await api(node, method!, path!, { token: a.tokens.s1, body: method === "POST" ? {} : undefined })).body).toMatchObject({ code: 403 });
      }
      expect((await api(node, "GET", "/api/v1/e2ee/devices")).status).toBe(401);
    } finally {
      await node.stop();
    }
  });

  test("calls that store or fan out are throttled per user", async () => {
    const node = await startTestNode("pglite", { e2eeWritesPerMinute: 3 });
    try {
      const [a, b] = [await signup(node, "t1", ["t1-1"]), await signup(node, "t2", ["t2-1"])];
      const codes: number[] = [];
      for (let i = 0; i < 5; i++) codes.push((await api(node, "POST", "/api/v1/e2ee/social/decrypt_shard", { token: a.tokens["t1-1"], body: {} })).body.code);
      expect(codes).toEqual([400, 400, 400, 429, 429]);
      // Another user has a budget of their own; reads are not counted.
      expect((await api(node, "POST", "/api/v1/e2ee/social/decrypt_shard", { token: b.tokens["t2-1"], body: {} })).body.code).toBe(400);
      expect((await api(node, "GET", "/api/v1/e2ee/devices", { token: a.tokens["t1-1"] })).body.code).toBe(0);
    } finally {
      await node.stop();
    }
  });
});
