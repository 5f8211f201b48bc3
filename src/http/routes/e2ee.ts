import type { Devices } from "../../domain/accounts/devices.ts";
import { Hono } from "hono";
import { z } from "zod";
import type { E2ee } from "../../domain/e2ee/index.ts";
import { unwrap } from "../../domain/errors.ts";
import { featuresFromConfig } from "../../domain/features/matrix.ts";
import { idList, MAX_ID_LIST, optionalId } from "../../domain/social/input.ts";
import type { Services } from "../../services.ts";
import { currentUser, requireUser, type AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { failureResponse } from "../errors.ts";
import { schema, valid } from "../openapi.ts";
import { perUserThrottle } from "../throttle.ts";
import { zAsSent, zId, zIdAlias, zInt } from "../zod.ts";

const b64 = (max: number) => z.string().min(1).max(max);
const keyBundle = z.object({ ed25519: b64(64), curve25519: b64(64), wrap_key: b64(4096), key_signature: b64(128) });
const trustEvent = z.object({
  target_uid: zId,
  target_device_id: z.string().min(1).max(128),
  target_ed25519: b64(64),
  from_state: z.string().max(20),
  to_state: z.string().max(20),
  method: z.string().max(40),
  ts: zInt.pipe(z.number().nonnegative()),
  actor_signature: b64(128),
});
const keyVersion = zInt.pipe(z.number().min(1).max(2 ** 31 - 1));
const createShards = z.object({
  key_version: keyVersion,
  threshold: zInt,
  shards: z.array(z.object({ proxy_uid: zId, encrypted_shard: z.string() })).max(100),
});

const ShardsQuery = z.object({ key_version: keyVersion });
const DevicesQuery = z.object({ user_id: zIdAlias("default: me (or uid)"), uid: zIdAlias() });
const ProxyKeysQuery = z.object({ user_ids: zAsSent(`64-bit ids: a list or a comma-separated string, at most ${MAX_ID_LIST}`) });
const DecryptShard = z.object({ shard_id: zAsSent("the shard to decrypt (string)") });

/**
 * E2EE (docs/e2ee.md): device keys, signed trust events, social-recovery shards.
 * The whole area answers 403 when the feature matrix turns e2ee off; every call that stores or fans out is
 * throttled per user.
 */
export function e2eeRoutes(services: Services, e2ee: E2ee, devices?: Devices): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const enabled = featuresFromConfig(services.config.features).e2ee;
  app.use("/api/v1/e2ee/*", requireUser(services), async (c, next) => {
    if (!enabled) return failureResponse(c, { kind: "forbidden", msg: "end-to-end encryption is turned off on this server" });
    await next();
  });
  const throttled = perUserThrottle(services, services.config.e2eeWritesPerMinute, "E2EE requests");

  app.post("/api/v1/e2ee/device_keys", throttled, schema({ summary: "Register this device's E2EE keys", params: keyBundle }), async (c) => {
    const me = currentUser(c);
    return ok(c, unwrap(await e2ee.keys.register(me.userId, me.deviceId, valid(c, keyBundle))));
  });

  app.get("/api/v1/e2ee/devices", schema({ summary: "A user's device keys (mine by default)", params: DevicesQuery }), async (c) => {
    const me = currentUser(c).userId;
    const of = unwrap(optionalId(valid(c, DevicesQuery), "user_id", "uid")) ?? me;
    return ok(c, { user_id: of, uid: of, list: unwrap(await e2ee.keys.list(me, of)) });
  });

  app.post("/api/v1/e2ee/trust_event", throttled, schema({ summary: "Submit a signed trust event", params: trustEvent }), async (c) => {
    const me = currentUser(c);
    const event = unwrap(await e2ee.trust.submit(me.userId, me.deviceId, valid(c, trustEvent)));
    // A destroyed device is signed out too (docs/accounts.md): its tokens stop, its sockets close on every node.
    if (event.method === "device_destroyed" && devices) unwrap(await devices.signOut(me.userId, me.deviceId, event.target_device_id));
    return ok(c, event);
  });

  app.get("/api/v1/e2ee/social/proxy_keys", throttled, schema({ summary: "Recovery proxies' public keys", params: ProxyKeysQuery }), async (c) => {
    const ids = idList(valid(c, ProxyKeysQuery).user_ids);
    if (!ids) return failureResponse(c, { kind: "bad_request", msg: `user_ids: must be a list of at most ${MAX_ID_LIST} 64-bit ids` });
    return ok(c, { list: unwrap(await e2ee.shards.proxyKeys(currentUser(c).userId, ids)) });
  });

  app.post("/api/v1/e2ee/social/create_shards", throttled, schema({ summary: "Store social-recovery shards for my proxies", params: createShards }), async (c) => {
    return ok(c, unwrap(await e2ee.shards.create(currentUser(c).userId, valid(c, createShards))));
  });

  app.get("/api/v1/e2ee/social/shards", schema({ summary: "My shards of one key version", params: ShardsQuery }), async (c) => {
    const { key_version } = valid(c, ShardsQuery);
    return ok(c, { list: await e2ee.shards.own(currentUser(c).userId, key_version) });
  });

  app.get("/api/v1/e2ee/social/proxy_shards", schema({ summary: "Shards I hold as a proxy" }), async (c) => ok(c, { list: await e2ee.shards.held(currentUser(c).userId) }));

  app.post("/api/v1/e2ee/social/decrypt_shard", throttled, schema({ summary: "Decrypt a shard I hold as a proxy", params: DecryptShard }), async (c) => {
    const raw = valid(c, DecryptShard).shard_id;
    const shardId = typeof raw === "string" ? raw.trim() : raw === undefined || raw === null ? undefined : String(raw);
    return ok(c, unwrap(await e2ee.shards.decrypt(currentUser(c).userId, shardId)));
  });

  return app;
}
