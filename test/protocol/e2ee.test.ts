/** The shared E2EE byte layouts: the docs' test vector, bounds, and the sealed box. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fromBase64, toBase64 } from "../../src/protocol/base64.ts";
import { deviceKeyBytes, seal, trustEventBytes, unseal, verifyEd25519Base64, RSA_OAEP_256 } from "../../src/protocol/e2ee.ts";
import { parseJson } from "../../src/protocol/json.ts";

const PKCS8_ED25519 = Uint8Array.from([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]);
async function keyFromSeed(first: number) {
  const p8 = new Uint8Array(48);
  p8.set(PKCS8_ED25519);
  p8.set(Uint8Array.from({ length: 32 }, (_, i) => first + i), 16);
  return crypto.subtle.importKey("pkcs8", p8, { name: "Ed25519" }, true, ["sign"]);
}

/** The vector as docs/e2ee.md prints it: `name: value` lines. */
function docVector(): Record<string, string> {
  const doc = readFileSync(join(import.meta.dir, "../../docs/e2ee.md"), "utf8");
  const out: Record<string, string> = {};
  for (const m of doc.matchAll(/^(actor_ed25519|event|bytes|actor_signature): +(.+)$/gm)) out[m[1]!] = m[2]!.trim();
  return out;
}

describe("trust event bytes", () => {
  test("the test vector in docs/e2ee.md: bytes, key and (deterministic) signature", async () => {
    const v = docVector();
    const event = parseJson(v.event!) as Parameters<typeof trustEventBytes>[0];
    const bytes = trustEventBytes(event);
    expect(Buffer.from(bytes).toString("hex")).toBe(v.bytes!);
    const actor = await keyFromSeed(0);
    expect(toBase64(Buffer.from((await crypto.subtle.exportKey("jwk", actor)).x!, "base64url"))).toBe(v.actor_ed25519!);
    expect(toBase64(new Uint8Array(await crypto.subtle.sign("Ed25519", actor, bytes)))).toBe(v.actor_signature!);
    expect(await verifyEd25519Base64(v.actor_ed25519!, v.actor_signature!, bytes)).toBe(true);
    // Any field changed: the signature no longer verifies.
    for (const change of [{ to_state: "revoked" }, { ts: event.ts + 1 }, { target_device_id: "b2" }, { actor_uid: event.actor_uid + 1n }, { method: "manual_number" }]) {
      expect(await verifyEd25519Base64(v.actor_ed25519!, v.actor_signature!, trustEventBytes({ ...event, ...change }))).toBe(false);
    }
  });

  test("fields that do not fit the layout are refused", () => {
    const base = parseJson(docVector().event!) as Parameters<typeof trustEventBytes>[0];
    expect(() => trustEventBytes({ ...base, target_device_id: "x".repeat(129) })).toThrow(RangeError);
    expect(() => trustEventBytes({ ...base, target_ed25519: "AAAA" })).toThrow(RangeError);
    expect(() => trustEventBytes({ ...base, actor_uid: -1n })).toThrow(RangeError);
    expect(() => trustEventBytes({ ...base, ts: 1.5 })).toThrow(RangeError);
    expect(() => trustEventBytes({ ...base, method: "m".repeat(41) })).toThrow(RangeError);
  });

  test("the key bundle and a trust event over the same key never share bytes (distinct tags)", () => {
    const k = toBase64(new Uint8Array(32).fill(1));
    const bundle = deviceKeyBytes({ uid: 1n, device_id: "d", ed25519: k, curve25519: k, wrap_key: "AQID" });
    expect(new TextDecoder().decode(bundle.subarray(0, 19))).toBe("ibis-device-keys-v1");
    expect(bundle.length).toBe(19 + 8 + 2 + 32 + 32 + 2 + 3);
  });
});

describe("sealed box", () => {
  test("opens with the right key only; any flipped byte fails", async () => {
    const pair = await crypto.subtle.generateKey({ ...RSA_OAEP_256, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }, false, ["encrypt", "decrypt"]);
    const other = await crypto.subtle.generateKey({ ...RSA_OAEP_256, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }, false, ["encrypt", "decrypt"]);
    const box = await seal(pair.publicKey, new TextEncoder().encode("share"));
    expect(new TextDecoder().decode((await unseal(pair.privateKey, box))!)).toBe("share");
    expect(await unseal(other.privateKey, box)).toBeUndefined();
    for (const at of [5, 2 + 256 + 3, box.length - 1]) {
      const bad = box.slice();
      bad[at]! ^= 1;
      expect(await unseal(pair.privateKey, bad)).toBeUndefined();
    }
    expect(await unseal(pair.privateKey, fromBase64("AAAA")!)).toBeUndefined();
  });
});
