/**
 * A complete production configuration boots (`bun src/main.ts`, IBIS_ENV=production, PostgreSQL, Redis, an
 * object store) and behaves as docs/operations.md says: init announces the configured ws_url, /api/v1 needs
 * signatures, /metrics its token, and attachments work.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { IbisApi, IbisApiError } from "../src/client/index.ts";
import { sharedRedisUrl, uniquePrefix } from "./bus/redis-fixture.ts";
import { startIbisProcess, type IbisProcess } from "./cluster/processes.ts";
import { startS3, type TestS3 } from "./support/s3.ts";
import { freshPostgresDatabase } from "./support/stores.ts";

const APP = { app: "ios", key: "production-app-key-0123456789abcdef" };
let s3: TestS3;
let db: { url: string; drop(): Promise<void> };
let node: IbisProcess;

beforeAll(async () => {
  [s3, db] = await Promise.all([startS3(), freshPostgresDatabase()]);
  node = await startIbisProcess({
    databaseUrl: db.url,
    redisUrl: sharedRedisUrl(),
    prefix: uniquePrefix(),
    extra: {
      IBIS_ENV: "production",
      IBIS_FIELD_KEY: "field-key-of-this-deployment-0123456789",
      IBIS_PASSWORD_MEMORY_KIB: "19456",
      IBIS_API_SIGNATURE: "on",
      IBIS_API_KEYS: `${APP.app}:${APP.key}`,
      IBIS_INIT_SECRET: "init-secret-of-this-deployment",
      IBIS_PUBLIC_WS_URL: "wss://im.example.com/ws",
      IBIS_METRICS_TOKEN: "metrics-token-0123456789",
      IBIS_S3_ENDPOINT: s3.config.s3Endpoint!,
      IBIS_S3_BUCKET: s3.config.s3Bucket!,
      IBIS_S3_ACCESS_KEY: s3.config.s3AccessKey!,
      IBIS_S3_SECRET_KEY: s3.config.s3SecretKey!,
    },
  });
}, 60_000);
afterAll(async () => {
  await node?.stop();
  await Promise.all([s3?.stop(), db?.drop()]);
});

test("init, signatures, metrics token and attachments in production", async () => {
  const api = new IbisApi({ url: node.url, signing: APP });
  expect((await fetch(`${node.url}/api/v1/app/init`)).status).toBe(401); // unsigned
  expect((await api.call<{ ws_url: string }>("GET", "/api/v1/app/init")).ws_url).toBe("wss://im.example.com/ws");

  const s = await api.signup(`prod-${Date.now()}`, "production-password");
  const unsigned = await new IbisApi({ url: node.url, token: s.token }).call("GET", "/api/v1/friend/list").catch((e: unknown) => e);
  expect((unsigned as IbisApiError).title).toBe("signature_missing");

  const p = await api.call<{ upload_url: string; headers: Record<string, string>; attachment_id: bigint }>(
    "GET",
    "/api/v1/attachment/presign?filename=hello.txt&size=5",
  );
  expect((await fetch(p.upload_url, { method: "PUT", headers: p.headers, body: "hello" })).status).toBe(200);
  const done = await api.call<{ download_url: string }>("POST", "/api/v1/attachment/complete", { attachment_id: p.attachment_id });
  expect(await (await fetch(done.download_url)).text()).toBe("hello");

  expect((await fetch(`${node.url}/metrics`)).status).toBe(401);
  const metrics = await fetch(`${node.url}/metrics`, { headers: { authorization: "Bearer metrics-token-0123456789" } });
  expect(await metrics.text()).toContain('ibis_messages_total{type="C2C"}');
}, 30_000);
