import { describe, expect, test } from "bun:test";
import { checkQr, decryptForDevice, encryptForDevices, qrSignedBytes } from "../../../src/client/e2ee/index.ts";
import { toBase64 as b64 } from "../../../src/client/e2ee/base64.ts";

async function makeQr(tamper?: "sig" | "blob" | "uid") {
  const kp = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as unknown as CryptoKeyPair;
  const ed = new Uint8Array(await crypto.subtle.exportKey("raw", kp.publicKey));
  const blob = new TextEncoder().encode("identity-blob");
  const fields = { v: 1 as const, uid: 9007199254740993n, device_id: "dev-A", ed25519: b64(ed), curve25519: b64(new Uint8Array(32).fill(5)) };
  const blobSig = new Uint8Array(await crypto.subtle.sign("Ed25519", kp.privateKey, blob));
  const sig = new Uint8Array(await crypto.subtle.sign("Ed25519", kp.privateKey, qrSignedBytes(fields)));
  if (tamper === "sig") sig[0]! ^= 1;
  const identity_blob = tamper === "blob" ? b64(new TextEncoder().encode("other-blob")) : b64(blob);
  const uid = tamper === "uid" ? "9007199254740994" : "9007199254740993";
  return `{"v":1,"uid":${uid},"device_id":"dev-A","ed25519":"${fields.ed25519}","curve25519":"${fields.curve25519}","identity_blob":"${identity_blob}","identity_signature":"${b64(blobSig)}","sig":"${b64(sig)}"}`;
}

describe("verification QR check (§2.10, §4.6)", () => {
  test("a genuine code passes, with the uid read exactly", async () => {
    const r = await checkQr(await makeQr());
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.qr.uid).toBe(9007199254740993n);
  });
  test.each(["sig", "blob", "uid"] as const)("tampered %s is rejected as tampered", async (what) => {
    expect(await checkQr(await makeQr(what))).toEqual({ ok: false, reason: "tampered" });
  });
  test.each(["not json", "{}", '{"v":2}', '{"v":1,"uid":"x"}'])("malformed %p is invalid", async (text) => {
    expect(await checkQr(text)).toEqual({ ok: false, reason: "invalid" });
  });
});

describe("E2EE message building (§2.8)", () => {
  const rsa = () =>
    crypto.subtle.generateKey(
      { name: "RSA-OAEP", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
      true,
      ["encrypt", "decrypt"],
    ) as Promise<CryptoKeyPair>;

  test("every receiving device opens it; metadata follows the §2.8 table; others cannot", async () => {
    const [d1, d2, outsider] = await Promise.all([rsa(), rsa(), rsa()]);
    const content = { text: "hello", n: 1 };
    const parts = await encryptForDevices(content, [
      { did: "d1", kid: "k1", publicKey: d1.publicKey },
      { did: "d2", publicKey: d2.publicKey },
    ]);
    expect(parts.e2ee).toMatchObject({ e2ee: true, e2ee_ver: 1, e2ee_suite: "RSA-OAEP-256+AES-256-GCM" });
    expect(Buffer.from(parts.e2ee.nonce, "base64").length).toBe(12);
    expect(parts.e2ee.keys.map((k) => [k.did, k.kid, k.wrap_alg])).toEqual([
      ["d1", "k1", "RSA-OAEP-256"],
      ["d2", undefined, "RSA-OAEP-256"],
    ]);
    expect(typeof parts.payload).toBe("string");
    expect(parts.payload).not.toContain("hello");
    expect(await decryptForDevice(parts, "d1", d1.privateKey)).toEqual(content);
    expect(await decryptForDevice(parts, "d2", d2.privateKey)).toEqual(content);
    expect(await decryptForDevice(parts, "d1", outsider.privateKey)).toBeUndefined();
    expect(await decryptForDevice(parts, "d3", d1.privateKey)).toBeUndefined();
  });

  test("needs at least one device", async () => {
    await expect(encryptForDevices({}, [])).rejects.toBeInstanceOf(RangeError);
    expect(b64(new Uint8Array([1, 2]))).toBe("AQI=");
  });
});
