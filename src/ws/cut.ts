/**
 * What a cut session hears and how it is closed (docs/accounts.md "Signed out,
 * suspended, deleted"): S2C `device_force_offline` with the reason, then a
 * close code from the 41xx range (do not reconnect with the same token).
 */
import type { SessionsEntry } from "../bus/bus.ts";
import type { CutReason, SessionCut } from "../domain/auth/revocation.ts";
import { stringifyJson } from "../protocol/json.ts";
import { CloseCode } from "./close-codes.ts";

const NOTICE: Record<CutReason, { readonly code: number; readonly content: string }> = {
  logout: { code: CloseCode.SignedOut, content: "signed out on this device" },
  signed_out: { code: CloseCode.SignedOut, content: "signed out from another of your devices" },
  token_reuse: { code: CloseCode.SignedOut, content: "a refresh token was used twice: sign in again" },
  suspended: { code: CloseCode.Suspended, content: "this account is suspended" },
  account_deleted: { code: CloseCode.AccountDeleted, content: "this account was deleted" },
};

/** The bus entry that tells and closes the sockets of `cut` on a node. */
export function cutEntry(cut: SessionCut): SessionsEntry {
  const notice = NOTICE[cut.reason];
  const payload: Record<string, unknown> = { reason: cut.reason, content: notice.content, user_id: cut.userId, uid: cut.userId };
  if (cut.deviceId !== undefined) payload.device_id = cut.deviceId;
  if (cut.byDeviceId !== undefined) payload.by_device_id = cut.byDeviceId;
  return {
    kind: "sessions",
    userId: cut.userId,
    ...(cut.deviceId === undefined ? {} : { sessionDeviceId: cut.deviceId }),
    ...(cut.belowGen === undefined ? {} : { belowGen: cut.belowGen }),
    action: "device_force_offline",
    payload: stringifyJson(payload),
    close: { code: notice.code, reason: cut.reason },
  };
}
