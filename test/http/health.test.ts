import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";

for (const kind of storeKinds()) {
  describe(`health and fallbacks [${kind}]`, () => {
    let node: TestNode;
    beforeAll(async () => {
      node = await startTestNode(kind);
    });
    afterAll(() => node.stop());

    test("GET /health answers ok while the database answers", async () => {
      const res = await api(node, "GET", "/health");
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ code: 0, msg: "success.", payload: { status: "ok", database: true, store: kind } });
      expect(typeof res.body.sv_ts).toBe("number");
    });

    test("unknown route is an envelope 404, with or without a token", async () => {
      for (const token of [undefined, "garbage"]) {
        const res = await api(node, "GET", "/api/v1/nope", { token });
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ code: 404, payload: {} });
        expect(typeof res.body.msg).toBe("string");
      }
    });

    test("an uncaught error is an envelope 500 with nothing of the error in it", async () => {
      const other = await startTestNode(kind);
      await other.services.store.close();
      const res = await api(other, "POST", "/api/v1/passport/login", { body: { account: "someone", pwd: "secret-pass" } });
      await other.stop();
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ code: 500, msg: "internal server error", sv_ts: expect.any(Number), payload: {} });
      expect(res.text).not.toMatch(/Failed query|select|someone|\bat\s|stack/i);
    });

    test("GET /health answers 503 once the database is gone", async () => {
      const other = await startTestNode(kind);
      await other.services.store.close();
      const res = await api(other, "GET", "/health");
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 503, payload: { database: false } });
      await other.stop();
    });
  });
}
