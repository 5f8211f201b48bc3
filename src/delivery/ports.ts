/**
 * The contract between the transport (src/ws), the delivery engine
 * (src/delivery) and the social graph (src/domain/social). Each side builds
 * against these types only; src/node.ts wires the implementations together.
 */
import type { Result } from "../domain/errors.ts";
import type { ClientAck, ImMessage, Outbound } from "../model/message.ts";

// The shared model lives in src/model; re-exported so existing imports keep working.
export { Outbound, type ChatType, type ClientAck, type E2eeMeta, type ImMessage } from "../model/message.ts";

export interface DeviceAddress {
  readonly userId: bigint;
  readonly deviceId: string;
}

/** What `Session.send` did with a message. */
export type SendOutcome = "sent" | "queued" | "closed";

/** One open WebSocket of one device on this node (implemented by src/ws). */
export interface Session extends DeviceAddress {
  /** Unique per node for the connection's lifetime. */
  readonly connId: number;
  readonly deviceType: string;
  /** When the connection opened (ms, services.now): a cross-node kick closes only sessions opened before its `at`. */
  readonly openedAt: number;
  /** Encodes for this connection's sub-protocol and sends. Never throws. */
  send(out: Outbound): SendOutcome;
  /** Closes with a close code from docs/websocket.md. */
  close(code: number, reason: string): void;
}

/** This node's open sessions (implemented by src/ws). */
export interface SessionRegistry {
  /** Every local session of a user, all devices. */
  sessionsOf(userId: bigint): readonly Session[];
  session(userId: bigint, deviceId: string): Session | undefined;
}

/**
 * The delivery engine as the transport sees it (implemented by src/delivery).
 * The transport decodes bytes and throttles; the engine validates, stores,
 * acknowledges, routes and retries.
 */
export interface DeliveryEngine {
  /** A device connected: presence, takeover already handled, pull_offline_msg if it has pending messages. */
  onOpen(session: Session): void;
  onClose(session: Session): void;
  /**
   * A decoded business message (JSON object, or protobuf decoded to the same
   * field names). The engine answers on `session` (SERVER_ACK or a refusal).
   */
  onMessage(session: Session, raw: Record<string, unknown>): void;
  onAck(session: Session, ack: ClientAck): void;
}

/** Server-originated notices (S2C), for every module that emits §6 events. */
export interface Notifier {
  /** Stores an S2C to every device of each user and pushes it with the S2C retry schedule. */
  notify(
    userIds: Iterable<bigint>,
    action: string,
    payload: Record<string, unknown>,
    opts?: { readonly exceptDevice?: DeviceAddress },
  ): Promise<void>;
  /** An S2C to one device only, not stored (refusals, answers to that connection); `payload` may be JSON text already. */
  tell(session: Session, action: string, payload: Record<string, unknown> | string, inReplyTo?: string): void;
}

/** What delivery asks the social graph (implemented by src/domain/social). */
export interface SocialGraph {
  /** May `from` send C2C to `to`? Failure kinds: user_not_found, not_a_friend, in_denylist, permission_denied. */
  checkC2C(from: bigint, to: bigint, opts: { readonly encrypted: boolean }): Promise<Result<void>>;
  /**
   * Members of group `groupId` when `userId` is one; failure not_group_member (or not_found). `fresh`: read
   * from the database, not the per-message cache (REST authorisation).
   */
  groupMembers(userId: bigint, groupId: bigint, opts?: { readonly fresh?: boolean }): Promise<Result<readonly bigint[]>>;
  /**
   * checkC2C and groupMembers (not `fresh`) answered from what is at hand, without waiting: undefined when that is not
   * enough (then the async form is asked). Optional: delivery routes a message without a promise when they answer.
   */
  checkC2CNow?(from: bigint, to: bigint, opts: { readonly encrypted: boolean }): Result<void> | undefined;
  groupMembersNow?(userId: bigint, groupId: bigint): Result<readonly bigint[]> | undefined;
  /** Friends of a user (presence fan-out). */
  friendsOf(userId: bigint): Promise<readonly bigint[]>;
  /** friendsOf from what is at hand (undefined: not cached; then the async form is asked). Optional, as checkC2CNow. */
  friendsOfNow?(userId: bigint): readonly bigint[] | undefined;
  /** After a C2G message is stored: mentions (payload.at_uids) and conversation bookkeeping. */
  afterGroupMessage(msg: ImMessage, groupId: bigint, serverId: bigint): Promise<void>;
}
