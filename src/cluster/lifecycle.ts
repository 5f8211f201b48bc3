import { CloseCode } from "../ws/close-codes.ts";

/**
 * Close code sent to every socket when a node shuts down: 1012 "Service
 * Restart" (RFC 6455 registry) tells the client to reconnect with its normal
 * back-off; another node (or this one restarted) takes it. The one close-code
 * table is src/model/close-codes.ts (docs/websocket.md).
 */
export const CLOSE_RECONNECT = CloseCode.ServiceRestart;
export const CLOSE_RECONNECT_REASON = "server restarting, reconnect";

/** What the transports ask about the node's own state. */
export interface Lifecycle {
  /** Set once shutdown begins: /readyz answers 503 and /ws refuses new handshakes. */
  readonly draining: boolean;
  /** Why the node is not ready, or undefined when it is (draining, Redis unreachable). */
  notReady(): string | undefined;
}
