/** IBIS_API_SIGNATURE end to end: the SDK signs, the server refuses unsigned, tampered, stale and replayed calls. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { IbisApi, IbisApiError } from "../../src/client/index.ts";
import { signRequest } from "../../src/protocol/signature.ts";
import { sharedRedisUrl, useRedis } from "../bus/redis-fixture.ts";
import { startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";

const APP = { app: "ios", key: "k".repeat(40) };
const signed = { apiSignature: true, apiKeys: `${APP.app}:${APP.key},web:${"w".repeat(32)}` };

async function refusal(promise: Promise<unknown>): Promise<IbisApiError> {
  const e = await promise.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(IbisApiError);
  return e as IbisApiError;
}

/** Sends exactly these headers and body (to replay or tamper with a signed request). */
async function raw(node: TestNode, path: string, headers: Record<string, string>, body?: string) {
  const res = await fetch(node.url + path, { method: body === undefined ? "GET" : "POST", headers: { "content-type": "application/json", ...headers }, body });
  return { status: res.status, body: (await res.json()) as { code: number; payload: { title?: string } } };
}

for (const kind of storeKinds()) {
  describe(`request signatures [${kind}]`, () => {
    let node: TestNode;
    beforeAll(async () => {
      node = await startTestNode(kind, signed);
    });
    afterAll(() => node.stop());

    test("signed SDK calls work; unsigned ones get 401 signature_missing; public and non-API paths stay open", async () => {
      const api = new IbisApi({ url: node.url, signing: APP });
      const s = await api.signup(`sig-${kind}-${Date.now()}`, "signed-password");
      expect(typeof s.token).toBe("string");
      expect(await api.call("GET", "/api/v1/friend/list")).toEqual({ list: [] });

      const unsigned = await refusal(new IbisApi({ url: node.url, token: s.token }).call("GET", "/api/v1/friend/list"));
      expect([unsigned.status, unsigned.code, unsigned.title]).toEqual([401, 401, "signature_missing"]);
      expect((await fetch(node.url + "/health")).status).toBe(200);
    });

    test("a wrong key, an unknown app, a tampered body or query → signature_invalid", async () => {
      const wrongKey = await refusal(new IbisApi({ url: node.url, signing: { app: "ios", key: "x".repeat(40) } }).call("GET", "/api/v1/app/features"));
      expect(wrongKey.title).toBe("signature_invalid");
      const unknown = await refusal(new IbisApi({ url: node.url, signing: { app: "nope", key: APP.key } }).call("GET", "/api/v1/app/features"));
      expect(unknown.title).toBe("signature_invalid");

      const body = JSON.stringify({ account: "tamper-target", pwd: "password-1" });
      const headers = await signRequest(APP, "POST", node.url + "/api/v1/passport/signup", new TextEncoder().encode(body));
      const tampered = await raw(node, "/api/v1/passport/signup", headers, body.replace("password-1", "password-2"));
      expect([tampered.status, tampered.body.payload.title]).toEqual([401, "signature_invalid"]);

      const q = await signRequest(APP, "GET", node.url + "/api/v1/agent/list?page=1", new Uint8Array());
      expect((await raw(node, "/api/v1/agent/list?page=2", q)).body.payload.title).toBe("signature_invalid");
    });

    test("a timestamp outside the window → signature_expired; the same request twice → signature_replayed", async () => {
      const stale = await signRequest(APP, "GET", node.url + "/api/v1/app/features", new Uint8Array(), Date.now() - 301_000);
      expect((await raw(node, "/api/v1/app/features", stale)).body.payload.title).toBe("signature_expired");
      const future = await signRequest(APP, "GET", node.url + "/api/v1/app/features", new Uint8Array(), Date.now() + 301_000);
      expect((await raw(node, "/api/v1/app/features", future)).body.payload.title).toBe("signature_expired");

      const once = await signRequest(APP, "GET", node.url + "/api/v1/app/features", new Uint8Array());
      expect((await raw(node, "/api/v1/app/features", once)).body.code).toBe(0);
      const again = await raw(node, "/api/v1/app/features", once);
      expect([again.status, again.body.payload.title]).toEqual([401, "signature_replayed"]);
    });
  });
}

describe("request signatures across nodes (Redis)", () => {
  const r = useRedis();
  test("a request replayed to another node sharing Redis is refused", async () => {
    const opts = { ...signed, redisUrl: sharedRedisUrl(), redisPrefix: r.prefix, nodeId: undefined };
    const a = await startTestNode("postgres", opts);
    const b = await startTestNode("postgres", opts);
    try {
      const headers = await signRequest(APP, "GET", a.url + "/api/v1/app/features", new Uint8Array());
      expect((await raw(a, "/api/v1/app/features", headers)).body.code).toBe(0);
      expect((await raw(b, "/api/v1/app/features", headers)).body.payload.title).toBe("signature_replayed");
      expect(await r.redis.exists(`${r.prefix}nonce:${APP.app}:${headers["x-ibis-nonce"]}`)).toBe(1);
    } finally {
      await a.stop();
      await b.stop();
    }
  }, 30_000);
});
