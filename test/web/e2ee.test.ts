/**
 * The SDK's E2EE (`ibis/client/e2ee`) in a real Chromium: the browser bundle
 * encrypts and decrypts with WebCrypto, and what the browser builds opens in
 * Bun (and the safety number agrees) — one implementation for both.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { decryptForDevice, safetyNumber, type EncryptedParts } from "../../src/client/e2ee/index.ts";

const CHROMIUM = process.env.IBIS_CHROMIUM ?? "/usr/bin/chromium";
const E2EE = join(import.meta.dir, "../../src/client/e2ee/index.ts");

/** The E2EE entry bundled for browsers, exposed as `globalThis.ibisE2ee`. */
async function e2eeBundle(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "ibis-e2ee-"));
  try {
    const entry = join(dir, "entry.ts");
    writeFileSync(entry, `import * as e2ee from ${JSON.stringify(E2EE)};\n(globalThis as any).ibisE2ee = e2ee;\n`);
    const r = await Bun.build({ entrypoints: [entry], target: "browser", minify: true });
    if (!r.success) throw new AggregateError(r.logs, "e2ee build failed");
    return await r.outputs[0]!.text();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("E2EE in Chromium", () => {
  let browser: Browser;
  let page: Page;
  let server: ReturnType<typeof Bun.serve>;

  beforeAll(async () => {
    // A loopback origin is a secure context: WebCrypto's subtle API needs one.
    server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("<!doctype html><title>e2ee</title>", { headers: { "content-type": "text/html" } }) });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-background-networking"] });
    page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${server.port}/`);
    await page.addScriptTag({ content: await e2eeBundle(), type: "module" });
    await page.waitForFunction("globalThis.ibisE2ee !== undefined");
  }, 60_000); // Chromium starts slowly on a loaded machine
  afterAll(async () => {
    await browser?.close();
    server?.stop(true);
  });

  test("encrypt and decrypt in the browser; the browser's message opens in Bun; the safety number matches", async () => {
    const ed = (n: number) => Array.from({ length: 32 }, (_, i) => (i * n + 7) & 0xff);
    const out = (await page.evaluate(`(async () => {
      const e = globalThis.ibisE2ee;
      const kp = await crypto.subtle.generateKey(
        { name: "RSA-OAEP", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["encrypt", "decrypt"]);
      const parts = await e.encryptForDevices({ text: "only for web-1" }, [{ did: "web-1", publicKey: kp.publicKey }]);
      const back = await e.decryptForDevice(parts, "web-1", kp.privateKey);
      const other = await e.decryptForDevice(parts, "web-2", kp.privateKey);
      const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", kp.privateKey)).toBase64();
      const sn = await e.safetyNumber(
        { uid: 7390000000000000001n, deviceId: "web-1", ed25519: new Uint8Array(${JSON.stringify(ed(3))}) },
        { uid: 7390000000000000002n, deviceId: "ios-9", ed25519: new Uint8Array(${JSON.stringify(ed(5))}) });
      return { parts, back, other: other === undefined, pkcs8, sn };
    })()`)) as { parts: EncryptedParts; back: unknown; other: boolean; pkcs8: string; sn: string };

    expect(out.back).toEqual({ text: "only for web-1" });
    expect(out.other).toBe(true); // no key for another device
    expect(out.parts.e2ee).toMatchObject({ e2ee: true, e2ee_ver: 1, keys: [{ did: "web-1", wrap_alg: "RSA-OAEP-256" }] });

    const key = await crypto.subtle.importKey("pkcs8", Uint8Array.fromBase64(out.pkcs8), { name: "RSA-OAEP", hash: "SHA-256" }, false, ["decrypt"]);
    expect(await decryptForDevice(out.parts, "web-1", key)).toEqual({ text: "only for web-1" });

    const inBun = await safetyNumber(
      { uid: 7390000000000000001n, deviceId: "web-1", ed25519: new Uint8Array(ed(3)) },
      { uid: 7390000000000000002n, deviceId: "ios-9", ed25519: new Uint8Array(ed(5)) },
    );
    expect(out.sn).toBe(inBun);
  }, 30_000);
});
