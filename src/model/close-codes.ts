/**
 * WebSocket close codes Ibis uses (table and client guidance in
 * docs/websocket.md). 4000–4099: the client may reconnect (with back-off);
 * 4100–4199: it must not reconnect as it was (new token, other offer, user action).
 */
export const CloseCode = {
  /** Client or server ended the session normally. */
  Normal: 1000,
  /** Endpoint going away (e.g. a test server stopped without draining): reconnect. */
  GoingAway: 1001,
  /** A WebSocket message above IBIS_WS_MAX_PAYLOAD (Bun closes; frame limit is answered with ERROR instead). */
  TooBig: 1009,
  /** Unexpected server error: reconnect. */
  InternalError: 1011,
  /** The node is shutting down or restarting (SIGTERM drain): reconnect with back-off, another node takes it. */
  ServiceRestart: 1012,
  /** The socket's send queue passed IBIS_WS_BACKPRESSURE_LIMIT; missed messages wait for the offline pull. */
  SlowConsumer: 4004,
  /** The access token expired and no fresh one came within the refresh window: refresh, then reconnect. */
  TokenExpired: 4101,
  /** None of the offered sub-protocols is supported. */
  UnsupportedProtocol: 4102,
  /** Another connection of the same user and device took over (after S2C logged_another_device). */
  Replaced: 4103,
  /** The device was signed out (logout, remote sign-out from another device, a reused refresh token): log in again. */
  SignedOut: 4104,
  /** An admin suspended the account (after S2C device_force_offline): login is refused until unsuspended. */
  Suspended: 4105,
  /** The account was deleted (its logout grace period ran out). */
  AccountDeleted: 4106,
} as const;

export type CloseCodeValue = (typeof CloseCode)[keyof typeof CloseCode];

/** May a client reconnect as it was (same token, same offer) after this close code? */
export function mayReconnect(code: number): boolean {
  if (code >= 4100 && code < 4200) return false;
  return code !== CloseCode.Normal;
}
