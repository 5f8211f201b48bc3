/**
 * Errors as values. Domain code returns `Result`s whose failures carry a
 * transport-neutral `kind`; each transport maps kinds to its own shape in one
 * place (src/http/errors.ts for envelope codes, src/ws for S2C actions and
 * ERROR frames).
 */
export type FailureKind =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "rate_limited"
  | "internal"
  | "user_not_found"
  | "not_a_friend"
  | "in_denylist"
  | "not_group_member"
  | "permission_denied"
  | "e2ee_key_not_found"
  | "e2ee_decryption_failed"
  | "account_suspended"
  // Channels (spec §7.3; docs/channels.md): stable business codes 960–974.
  | "channel_id_empty"
  | "user_id_empty"
  | "channel_role_invalid"
  | "order_no_empty"
  | "channel_not_found"
  | "order_not_found"
  | "channel_access_denied"
  | "channel_message_not_found"
  | "invitation_not_found"
  | "invitation_not_pending"
  | "order_not_payable"
  | "payment_unavailable"
  | "payment_failed"
  | "feature_disabled"
  | "channel_message_revoked";

export interface Failure {
  readonly kind: FailureKind;
  /** Human-readable, safe to show a client (never a secret or a stack). */
  readonly msg: string;
}

export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: Failure };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = (kind: FailureKind, msg: string): { ok: false; error: Failure } => ({
  ok: false,
  error: { kind, msg },
});

/** Thrown only to cross a framework boundary (Hono handler → onError); carries a Failure. */
export class FailureError extends Error {
  constructor(readonly failure: Failure) {
    super(failure.msg);
  }
}

/** Unwraps a Result inside a route handler: a failure becomes the envelope answer. */
export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  throw new FailureError(result.error);
}
