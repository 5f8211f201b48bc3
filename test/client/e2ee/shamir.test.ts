import { describe, expect, test } from "bun:test";
import { combineShares, splitSecret } from "../../../src/client/e2ee/index.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

describe("Shamir shares over GF(256)", () => {
  test("every subset of `threshold` shares gives the secret back; fewer give something else", () => {
    const secret = crypto.getRandomValues(new Uint8Array(32));
    const shares = splitSecret(secret, 5, 3);
    expect(shares.map((s) => s[0])).toEqual([1, 2, 3, 4, 5]);
    for (let a = 0; a < 5; a++)
      for (let b = a + 1; b < 5; b++)
        for (let c = b + 1; c < 5; c++) expect(hex(combineShares([shares[c]!, shares[a]!, shares[b]!]))).toBe(hex(secret));
    expect(hex(combineShares([shares[0]!, shares[1]!]))).not.toBe(hex(secret));
  });

  test("bounds and inconsistent shares are refused", () => {
    expect(() => splitSecret(new Uint8Array(4), 3, 1)).toThrow(RangeError);
    expect(() => splitSecret(new Uint8Array(4), 2, 3)).toThrow(RangeError);
    const s = splitSecret(new Uint8Array(4), 3, 2);
    expect(() => combineShares([s[0]!, s[0]!])).toThrow(RangeError);
    expect(() => combineShares([s[0]!, s[1]!.subarray(1)])).toThrow(RangeError);
  });
});
