import { describe, expect, test } from "bun:test";
import {
  applyTrust,
  crossSigning,
  E2eeSendRefusedException,
  nextState,
  sendDecision,
  StateError,
  UnimplementedError,
  type TrustState,
  type TrustTrigger,
} from "../../../src/client/e2ee/index.ts";

const triggers: TrustTrigger[] = [
  { kind: "first_sight" },
  { kind: "verify", method: "qr_scan" },
  { kind: "verify", method: "manual_number" },
  { kind: "cancel_verification" },
  { kind: "revoke" },
  { kind: "device_destroyed" },
  { kind: "identity_changed" },
];

// The §3.1 whitelist, written out in full: every (from, trigger) not listed is illegal.
const legal: Record<string, TrustState> = {
  "null first_sight": "unverified",
  "unverified verify": "verified",
  "verified cancel_verification": "unverified",
  "unverified revoke": "revoked",
  "verified revoke": "revoked",
  "unverified device_destroyed": "revoked",
  "verified device_destroyed": "revoked",
  "revoked identity_changed": "unverified",
};

describe("trust transitions (§3.1)", () => {
  for (const from of [null, "unverified", "verified", "revoked"] as const) {
    for (const trigger of triggers) {
      const want = legal[`${from} ${trigger.kind}`];
      test(`${from ?? "(none)"} --${trigger.kind}${"method" in trigger ? `/${trigger.method}` : ""}--> ${want ?? "StateError"}`, () => {
        if (want) expect(nextState(from, trigger)).toBe(want);
        else expect(() => nextState(from, trigger)).toThrow(StateError);
      });
    }
  }

  test("revoked → verified is illegal: it must pass through unverified", () => {
    expect(() => nextState("revoked", { kind: "verify", method: "qr_scan" })).toThrow(StateError);
  });

  test("any cross-signing driven change raises UnimplementedError", () => {
    for (const from of [null, "unverified", "verified", "revoked"] as const) {
      expect(() => nextState(from, { kind: "cross_sign" })).toThrow(UnimplementedError);
    }
  });

  test("applyTrust sets first_seen_at, verified_at/by, and clears them on cancel and identity change", () => {
    const peer = { uid: 9007199254740993n, deviceId: "d1", ed25519: "AAAA" };
    const seen = applyTrust(null, { kind: "first_sight" }, peer, 100);
    expect(seen).toMatchObject({ trust_state: "unverified", first_seen_at: 100, peer_uid: 9007199254740993n });
    const verified = applyTrust(seen, { kind: "verify", method: "qr_scan" }, peer, 200);
    expect(verified).toMatchObject({ trust_state: "verified", verified_at: 200, verified_by: "qr_scan", first_seen_at: 100 });
    const cancelled = applyTrust(verified, { kind: "cancel_verification" }, peer, 300);
    expect(cancelled.trust_state).toBe("unverified");
    expect(cancelled.verified_at).toBeUndefined();
    const revoked = applyTrust(cancelled, { kind: "revoke" }, peer, 400);
    const renewed = applyTrust(revoked, { kind: "identity_changed" }, { ...peer, ed25519: "BBBB" }, 500);
    expect(renewed).toMatchObject({ trust_state: "unverified", peer_ed25519: "BBBB", first_seen_at: 500 });
  });
});

describe("sending gate (§3.1)", () => {
  const peer = { uid: 7n, deviceId: "d" };
  test.each([
    ["verified", {}],
    ["unverified", { trust_warning: "unverified" }],
  ] as const)("%s → sent", (state, extra) => {
    expect(sendDecision(state, peer)).toEqual({ send: true, ...extra });
  });
  test("revoked → E2eeSendRefusedException, unless force-confirmed", () => {
    expect(() => sendDecision("revoked", peer)).toThrow(E2eeSendRefusedException);
    expect(sendDecision("revoked", peer, true)).toEqual({ send: true, trust_warning: "revoked" });
  });
});

describe("CrossSigningService (§4.6)", () => {
  test("verifyNewDevice and revokeDevice throw UnimplementedError; isCrossSigned is false", async () => {
    await expect(crossSigning.verifyNewDevice("a", "b", "c")).rejects.toBeInstanceOf(UnimplementedError);
    await expect(crossSigning.revokeDevice("a")).rejects.toBeInstanceOf(UnimplementedError);
    expect(await crossSigning.isCrossSigned(1n, "a")).toBe(false);
  });
});
