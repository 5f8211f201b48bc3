import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateRsaPrivateKeyPem, loadLoginRsa, loginRsaFromPem } from "../../../src/domain/auth/login-rsa.ts";
import { freshStore, storeKinds, type TestStore } from "../../support/stores.ts";

async function wrap(publicPem: string, text: string): Promise<string> {
  const der = Buffer.from(publicPem.replace(/-----[A-Z ]+-----|\s/g, ""), "base64");
  const key = await crypto.subtle.importKey("spki", der, { name: "RSA-OAEP", hash: "SHA-256" }, false, ["encrypt"]);
  return Buffer.from(await crypto.subtle.encrypt({ name: "RSA-OAEP" }, key, new TextEncoder().encode(text))).toString("base64");
}

describe("login RSA wrapping", () => {
  test("a configured key: unwraps what its published public key wrapped; garbage is a 400", async () => {
    const rsa = await loginRsaFromPem(await generateRsaPrivateKeyPem());
    expect(rsa.publicKeyPem).toStartWith("-----BEGIN PUBLIC KEY-----\n");
    expect(await rsa.unwrap(await wrap(rsa.publicKeyPem, "pässword"))).toEqual({ ok: true, value: "pässword" });
    const bad = await rsa.unwrap("bm90IGEgY2lwaGVydGV4dA==");
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.kind).toBe("bad_request");
  });
});

for (const kind of storeKinds()) {
  describe(`generated login RSA key [${kind}]`, () => {
    let fresh: TestStore;
    beforeAll(async () => {
      fresh = await freshStore(kind);
    });
    afterAll(() => fresh.dispose());

    test("is generated once and shared through the database", async () => {
      const [a, b] = await Promise.all([loadLoginRsa("", fresh.store), loadLoginRsa("", fresh.store)]);
      const c = await loadLoginRsa("", fresh.store);
      expect(b.publicKeyPem).toBe(a.publicKeyPem);
      expect(c.publicKeyPem).toBe(a.publicKeyPem);
      expect(await c.unwrap(await wrap(a.publicKeyPem, "pw"))).toEqual({ ok: true, value: "pw" });
    });
  });
}
