/**
 * The trust-state machine of spec §3.1 (frozen by §9.7), shared by the SDK
 * (src/client/e2ee/trust.ts) and the server's trust-event check
 * (src/domain/e2ee/trust-events.ts): one whitelist, one function.
 */
export type TrustState = "unverified" | "verified" | "revoked";
export type VerifiedBy = "qr_scan" | "manual_number" | "cross_sign";

export const TRUST_STATES: readonly TrustState[] = ["unverified", "verified", "revoked"];

/** Illegal trust transition (spec §7.7). */
export class StateError extends Error {
  override readonly name = "StateError";
}
/** Cross-signing and anything it would drive (spec §3.1 rule 2, §4.6). */
export class UnimplementedError extends Error {
  override readonly name = "UnimplementedError";
}

export type TrustTrigger =
  | { readonly kind: "first_sight" }
  | { readonly kind: "verify"; readonly method: "qr_scan" | "manual_number" }
  | { readonly kind: "cancel_verification" }
  | { readonly kind: "revoke" }
  | { readonly kind: "device_destroyed" }
  | { readonly kind: "identity_changed" }
  | { readonly kind: "cross_sign" };

/** The whitelist: from-state (or null for none) × trigger → to-state. */
export function nextState(from: TrustState | null, trigger: TrustTrigger): TrustState {
  if (trigger.kind === "cross_sign") throw new UnimplementedError("cross-signing does not change trust state in this version");
  switch (trigger.kind) {
    case "first_sight":
      if (from === null) return "unverified";
      break;
    case "verify":
      if (from === "unverified") return "verified";
      break;
    case "cancel_verification":
      if (from === "verified") return "unverified";
      break;
    case "revoke":
    case "device_destroyed":
      if (from === "unverified" || from === "verified") return "revoked";
      break;
    case "identity_changed":
      if (from === "revoked") return "unverified";
      break;
  }
  throw new StateError(`illegal trust transition from ${from ?? "(none)"} on ${trigger.kind}`);
}

/**
 * The methods a signed trust event may carry (the trust_audit `method`
 * values of §2.10) and the trigger each stands for. The other transitions
 * (first sight, cancelling a verification, a new identity after revocation)
 * are local to the client and are never sent.
 */
export const TRUST_EVENT_METHODS = {
  qr_scan: { kind: "verify", method: "qr_scan" },
  manual_number: { kind: "verify", method: "manual_number" },
  revoke: { kind: "revoke" },
  device_destroyed: { kind: "device_destroyed" },
} as const satisfies Record<string, TrustTrigger>;

export type TrustEventMethod = keyof typeof TRUST_EVENT_METHODS;

export const isTrustEventMethod = (m: unknown): m is TrustEventMethod =>
  typeof m === "string" && Object.hasOwn(TRUST_EVENT_METHODS, m);

export const isTrustState = (s: unknown): s is TrustState => s === "unverified" || s === "verified" || s === "revoked";

/** Is `from → to` by `method` a legal signed trust event? (The same check the client made before signing.) */
export function legalTrustEvent(from: TrustState, to: TrustState, method: TrustEventMethod): boolean {
  try {
    return nextState(from, TRUST_EVENT_METHODS[method]) === to;
  } catch (e) {
    if (e instanceof StateError) return false;
    throw e;
  }
}
