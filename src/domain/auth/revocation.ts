/**
 * The one revocation path (docs/auth.md "Revocation"): logout, remote sign-out,
 * a reused refresh token, suspension and account deletion all end in a
 * `SessionCut` once the database says so (a session generation bumped, the
 * account suspended or deleted). The cutter — src/node.ts — makes every node
 * forget what it remembered of the user's sessions (bus `invalidate`) and
 * tell-then-close the matching sockets wherever they are (bus `sessions`).
 */
export type CutReason = "logout" | "signed_out" | "token_reuse" | "suspended" | "account_deleted";

export interface SessionCut {
  readonly userId: bigint;
  readonly reason: CutReason;
  /** Only the sockets authenticated by this device session (the token's `did`); absent: all of the user's. */
  readonly deviceId?: string;
  /** Only sockets whose token is of a generation below this (a later login on the device stays open). */
  readonly belowGen?: number;
  /** The device that asked for a remote sign-out (told to the signed-out device). */
  readonly byDeviceId?: string;
}

export interface SessionCutter {
  /** Never throws; the cut is on its way to every node when it returns. */
  cut(c: SessionCut): void;
}

/** Sessions on every node: the cutter, a notice to every connected device of a type (admin `app_upgrade`), who is online. */
export interface SessionControl extends SessionCutter {
  tellDeviceType(deviceType: string, action: string, payload: Record<string, unknown>): void;
  /** The user's devices connected now, on this node or (presence) any other; others unknown while Redis is away. */
  onlineDevices(userId: bigint): Promise<Set<string>>;
}
