import { createDecipheriv, createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FEATURES } from "../../src/domain/features/matrix.ts";
import { parseJson } from "../../src/protocol/json.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";

const INIT_SECRET = "app-shared-init-secret";

/** docs/auth.md, "Init encryption", step by step. */
function decryptInitAsDocumented(res: string): unknown {
  const key = createHash("sha256").update(INIT_SECRET, "utf8").digest();
  const raw = Buffer.from(res, "base64");
  const d = createDecipheriv("aes-256-cbc", key, raw.subarray(0, 16));
  return parseJson(Buffer.concat([d.update(raw.subarray(16)), d.final()]).toString("utf8"));
}

for (const kind of storeKinds()) {
  describe(`public endpoints [${kind}]`, () => {
    let node: TestNode;
    beforeAll(async () => {
      node = await startTestNode(kind, {
        initSecret: INIT_SECRET,
        features: '{"channel":{"enabled":false},"e2ee":{}}',
        publicUploadUrl: "https://files.example/upload",
      });
    });
    afterAll(() => node.stop());

    test("the two public pages are HTML, no login", async () => {
      for (const path of ["/privacy-policy", "/account-deletion"]) {
        const res = await fetch(node.url + path);
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toContain("text/html");
        expect(await res.text()).toContain("<h1>");
      }
    });

    test("app/features applies the §2.5 rules to the configured block, no login", async () => {
      const res = await api(node, "GET", "/api/v1/app/features");
      expect(res.body.code).toBe(0);
      expect(Object.keys(res.body.payload)).toEqual([...FEATURES]);
      expect(res.body.payload).toMatchObject({ core: true, e2ee: true, channel: false, channel_discover: false, channel_order: false });
    });

    test("app/init is plain and carries attach_presign_endpoint and empty upload key/scene", async () => {
      const res = await api(node, "GET", "/api/v1/app/init");
      expect(res.body.payload).toEqual({
        ws_url: `ws://127.0.0.1:${node.port}/ws`,
        upload_url: "https://files.example/upload",
        upload_key: "",
        upload_scene: "",
        login_pwd_rsa_encrypt: false,
        login_rsa_pub_key: "",
        attach_presign_endpoint: "/api/v1/attachment/presign",
      });
      // ws_url comes from configuration or the node's own address, never from what the request claims.
      const forged = await api(node, "GET", "/api/v1/app/init", { headers: { host: "evil.example", "x-forwarded-proto": "https" } });
      expect(forged.body.payload.ws_url).toBe(`ws://127.0.0.1:${node.port}/ws`);
    });

    test("init's res decrypts with the documented derivation to the same content", async () => {
      const res = await api(node, "GET", "/api/v1/init");
      expect(res.body.code).toBe(0);
      expect(Object.keys(res.body.payload)).toEqual(["res"]);
      const plain = (await api(node, "GET", "/api/v1/app/init")).body.payload;
      expect(decryptInitAsDocumented(res.body.payload.res)).toEqual(plain);
    });
  });
}
