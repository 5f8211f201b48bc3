import { describe, expect, test } from "bun:test";
import { legalTrustEvent, TRUST_EVENT_METHODS, TRUST_STATES, type TrustEventMethod } from "../../../src/model/trust.ts";

describe("signed trust events on the §3.1 whitelist", () => {
  test("exactly these (from, to, method) triples are legal", () => {
    const legal: string[] = [];
    for (const from of TRUST_STATES)
      for (const to of TRUST_STATES)
        for (const method of Object.keys(TRUST_EVENT_METHODS) as TrustEventMethod[]) if (legalTrustEvent(from, to, method)) legal.push(`${from}>${to}:${method}`);
    expect(legal.sort()).toEqual(
      [
        "unverified>verified:qr_scan",
        "unverified>verified:manual_number",
        "unverified>revoked:revoke",
        "verified>revoked:revoke",
        "unverified>revoked:device_destroyed",
        "verified>revoked:device_destroyed",
      ].sort(),
    );
  });
});
