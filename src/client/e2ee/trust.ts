/**
 * Per-peer-device trust state, kept on the client (spec §3.1, frozen by §9.7).
 * `transition` is the checked whitelist; everything else is a StateError, and
 * anything driven by cross-signing is an UnimplementedError in this version.
 */
import { nextState, type TrustState, type TrustTrigger, type VerifiedBy } from "../../model/trust.ts";
import { E2eeSendRefusedException } from "./errors.ts";

// The whitelist itself lives in src/model/trust.ts: the server checks trust events with the same function.
export { nextState, type TrustState, type TrustTrigger, type VerifiedBy };

export interface TrustRecord {
  readonly peer_uid: bigint;
  readonly peer_device_id: string;
  /** Base64 of the 32-byte identity key. */
  readonly peer_ed25519: string;
  readonly trust_state: TrustState;
  readonly verified_at?: number;
  readonly verified_by?: VerifiedBy;
  readonly first_seen_at: number;
  readonly last_safety_number?: string;
}

/** Applies a trigger to a record, setting the fields §3.1 says go with it. */
export function applyTrust(
  record: TrustRecord | null,
  trigger: TrustTrigger,
  peer: { uid: bigint; deviceId: string; ed25519: string },
  now: number,
): TrustRecord {
  const to = nextState(record?.trust_state ?? null, trigger);
  const base: TrustRecord = record ?? {
    peer_uid: peer.uid,
    peer_device_id: peer.deviceId,
    peer_ed25519: peer.ed25519,
    trust_state: to,
    first_seen_at: now,
  };
  if (trigger.kind === "verify") return { ...base, trust_state: to, verified_at: now, verified_by: trigger.method };
  if (trigger.kind === "identity_changed") {
    const { verified_at: _a, verified_by: _b, last_safety_number: _c, ...rest } = base;
    return { ...rest, peer_ed25519: peer.ed25519, trust_state: to, first_seen_at: now };
  }
  if (trigger.kind === "cancel_verification") {
    const { verified_at: _a, verified_by: _b, ...rest } = base;
    return { ...rest, trust_state: to };
  }
  return { ...base, trust_state: to };
}

export interface SendDecision {
  readonly send: true;
  /** Goes into the message metadata; "revoked" only on a force-send after the second confirmation. */
  readonly trust_warning?: "unverified" | "revoked";
}

/**
 * The sending gate (§3.1), per recipient device, before encryption. It reads
 * only the trust state, never the cross-signing service. A revoked device is
 * refused unless the user confirmed a second time (`forceConfirmed`).
 */
export function sendDecision(state: TrustState, peer: { uid: bigint; deviceId: string }, forceConfirmed = false): SendDecision {
  if (state === "verified") return { send: true };
  if (state === "unverified") return { send: true, trust_warning: "unverified" };
  if (forceConfirmed) return { send: true, trust_warning: "revoked" };
  throw new E2eeSendRefusedException(peer.uid, peer.deviceId);
}
