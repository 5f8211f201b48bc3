import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { encodeSide, safetyNumber, SAFETY_NUMBER_VERSION, type SafetySide } from "../../../src/client/e2ee/index.ts";

const key = (fill: number) => new Uint8Array(32).fill(fill);
const alice: SafetySide = { uid: 18446744073709551615n, deviceId: "phone-1", ed25519: key(1) };
const bob: SafetySide = { uid: 737373737373737373n, deviceId: "laptop", ed25519: key(2) };

/** The §2.11 rules written independently with node:crypto, to check the WebCrypto version against. */
function reference(a: SafetySide, b: SafetySide): string {
  const enc = (s: SafetySide) => {
    const did = Buffer.from(s.deviceId, "utf8");
    const uid = Buffer.alloc(8);
    uid.writeBigUInt64BE(s.uid);
    return Buffer.concat([Buffer.from([SAFETY_NUMBER_VERSION]), uid, Buffer.from([did.length]), did, Buffer.from(s.ed25519)]);
  };
  const [first, second] = [enc(a), enc(b)].sort(Buffer.compare);
  const mac = createHmac("sha256", first!).update(Buffer.concat([Buffer.from([0]), second!])).digest();
  const n = BigInt("0x" + mac.subarray(0, 30).toString("hex")) % 10n ** 60n;
  return n.toString().padStart(60, "0").replace(/(\d{5})(?=\d)/g, "$1 ");
}

describe("safety number (§2.11)", () => {
  test("60 digits in 12 groups of 5, single spaces", async () => {
    expect(await safetyNumber(alice, bob)).toMatch(/^\d{5}( \d{5}){11}$/);
  });

  test("matches an independent implementation of the rules", async () => {
    expect(await safetyNumber(alice, bob)).toBe(reference(alice, bob));
  });

  test("both parties compute the same number", async () => {
    expect(await safetyNumber(alice, bob)).toBe(await safetyNumber(bob, alice));
  });

  test("any change to uid, device_id or ed25519 changes the whole result", async () => {
    const base = await safetyNumber(alice, bob);
    const variants: SafetySide[] = [
      { ...bob, uid: bob.uid + 1n },
      { ...bob, deviceId: "laptop2" },
      { ...bob, ed25519: Uint8Array.from(key(2), (v, i) => (i === 31 ? 3 : v)) },
    ];
    for (const v of variants) expect(await safetyNumber(alice, v)).not.toBe(base);
  });

  test("the same key under another uid gives a different number", async () => {
    expect(await safetyNumber(alice, { ...bob, uid: 1n })).not.toBe(await safetyNumber(alice, bob));
  });

  test("encoding: version || uid BE || len || device_id || key", () => {
    const e = encodeSide({ uid: 0x0102030405060708n, deviceId: "ab", ed25519: key(9) });
    expect(Array.from(e.subarray(0, 12))).toEqual([SAFETY_NUMBER_VERSION, 1, 2, 3, 4, 5, 6, 7, 8, 2, 0x61, 0x62]);
    expect(e.length).toBe(1 + 8 + 1 + 2 + 32);
  });

  test("rejects malformed sides", () => {
    expect(() => encodeSide({ ...bob, ed25519: new Uint8Array(31) })).toThrow(RangeError);
    expect(() => encodeSide({ ...bob, uid: -1n })).toThrow(RangeError);
    expect(() => encodeSide({ ...bob, deviceId: "x".repeat(256) })).toThrow(RangeError);
  });
});
