import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { FailureError, type Failure, type FailureKind } from "../domain/errors.ts";
import type { Logger } from "../log.ts";
import { envelope, json } from "./envelope.ts";

/** The one mapping from failure kinds to envelope codes (spec §7.1). */
export const ENVELOPE_CODE: Record<FailureKind, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  permission_denied: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  internal: 500,
  user_not_found: 940,
  not_a_friend: 941,
  in_denylist: 942,
  not_group_member: 943,
  channel_id_empty: 960,
  user_id_empty: 961,
  channel_role_invalid: 962,
  order_no_empty: 963,
  channel_not_found: 964,
  order_not_found: 965,
  channel_access_denied: 966,
  channel_message_not_found: 967,
  invitation_not_found: 968,
  invitation_not_pending: 969,
  order_not_payable: 970,
  payment_unavailable: 971,
  payment_failed: 972,
  feature_disabled: 973,
  channel_message_revoked: 974,
  e2ee_decryption_failed: 5053,
  e2ee_key_not_found: 5054,
  account_suspended: 950,
};

/** HTTP status carried with an envelope: the code itself when it is an HTTP error code, else 200. */
export function httpStatusFor(code: number): ContentfulStatusCode {
  return code >= 400 && code <= 599 ? (code as ContentfulStatusCode) : 200;
}

export function failureResponse(c: Context, failure: Failure, payload: unknown = {}): Response {
  const code = ENVELOPE_CODE[failure.kind];
  return json(c, envelope(code, failure.msg, payload), httpStatusFor(code));
}

/** Hono onError: failures become envelopes; anything else is a 500 with no detail to the client. */
export function onError(log: Logger) {
  return (err: Error, c: Context): Response => {
    if (err instanceof FailureError) return failureResponse(c, err.failure);
    if (err instanceof HTTPException && err.status < 500) {
      return json(c, envelope(err.status, err.message || "bad request", {}), httpStatusFor(err.status));
    }
    log.error("unhandled error", { path: c.req.path, method: c.req.method, err });
    return json(c, envelope(500, "internal server error", {}), 500);
  };
}
