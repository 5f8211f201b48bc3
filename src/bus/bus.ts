/**
 * The cluster bus: what crosses from one Ibis node to another. Each node has
 * one inbox; `send(to, entry)` puts an entry in node `to`'s inbox and the
 * handler given to `start` receives the entries addressed to this node.
 *
 * Delivery is at least once (a Redis failure mid-pipeline can repeat an
 * entry); every entry kind is idempotent on the receiving side (the same
 * message pushed twice carries the same id, a repeated kick or ack is a no-op).
 * Implementations: memory.ts (one process) and redis-streams.ts (REDIS_URL).
 */
import type { ChatType } from "../model/message.ts";

/** One recipient on the target node: every local session of `userId`, or only `deviceId`'s. */
export interface BusTarget {
  readonly userId: bigint;
  readonly deviceId?: string;
}

/**
 * Push one already encoded message (src/bus/message.ts `encodeBusMessage`,
 * encoded once per message, not per node) to the targets' sessions on the
 * receiving node. One entry per target node per message, never per device.
 */
export interface DeliverEntry {
  readonly kind: "deliver";
  readonly targets: readonly BusTarget[];
  readonly message: Uint8Array;
}

/**
 * Close a device's sessions on the receiving node after telling it `action`
 * (takeover: logged_another_device; device_force_offline). Only sessions
 * opened before `at` (ms) are closed, so a kick that arrives late never
 * closes the connection that caused it.
 */
export interface KickEntry {
  readonly kind: "kick";
  readonly userId: bigint;
  readonly deviceId: string;
  readonly action: string;
  readonly at: number;
}

/**
 * An acknowledgement that landed on another node than the device's
 * connection (REST offline_ack), forwarded to the node presence shows for
 * the device, which runs its retries and cancels this one. Marks are written
 * (to the database) by the node that took the ack.
 */
export interface AckEntry {
  readonly kind: "ack";
  readonly userId: bigint;
  readonly deviceId: string;
  readonly msgId: string;
  readonly type: ChatType;
}

/**
 * Sent by a node whose Redis connection came back: while it was cut off it
 * stored messages for `userIds` whose devices on other nodes it could not
 * reach (presence or bus failed). The receiving node tells those users' local
 * devices that have pending messages to pull (`pull_offline_msg`). Without
 * `userIds` (too many to list): every local device with pending messages.
 */
export interface PullEntry {
  readonly kind: "pull";
  readonly userIds?: readonly bigint[];
}

/** A social fact that changed (src/domain/social/facts.ts `Invalidation`). */
export type SocialChange =
  | { readonly kind: "pair"; readonly a: bigint; readonly b: bigint }
  | { readonly kind: "group"; readonly groupId: bigint }
  | { readonly kind: "user"; readonly userId: bigint };

/**
 * A social cache invalidation made on the sending node, sent to every other
 * live node so their caches drop the same entry at once instead of after
 * the TTL. The receiver does not re-broadcast it.
 */
export interface InvalidateEntry {
  readonly kind: "invalidate";
  readonly change: SocialChange;
}

/**
 * Something happened in a channel (docs/channels.md "Pushes"): sent to every
 * live node, each of which pushes to its own online subscribers (unread
 * counts computed there from the channel's cursor table, or `payload` as is).
 * Repeating it repeats a push carrying the same current value.
 */
export interface ChannelEntry {
  readonly kind: "channel";
  readonly channelId: bigint;
  /** channel_unread_count, channel_message_edited or channel_message_revoked. */
  readonly action: string;
  /** JSON text of the payload, the same for every recipient (edited, revoked). */
  readonly payload?: string;
  /** Only these users' devices (mark read); absent: every online subscriber. */
  readonly userIds?: readonly bigint[];
  /** The subscriber count the sender saw: picks which side the receiver walks. */
  readonly subscribers?: number;
}

/**
 * Tell the receiving node's matching sessions `action` (an S2C, not stored),
 * then close them when `close` is set (docs/accounts.md): a device signed out,
 * a user suspended or deleted, an `app_upgrade` to every device of a type.
 * Sessions match by user (absent: every user), by the device session their
 * token belongs to (the token's `did`), by token generation (below
 * `belowGen`) and by device type. Repeating it is harmless: a closed session
 * no longer matches, and a repeated notice carries the same content.
 */
export interface SessionsEntry {
  readonly kind: "sessions";
  readonly userId?: bigint;
  readonly sessionDeviceId?: string;
  readonly belowGen?: number;
  readonly deviceType?: string;
  readonly action: string;
  /** The S2C payload as JSON text (encoded once by the sender). */
  readonly payload: string;
  readonly close?: { readonly code: number; readonly reason: string };
}

export type BusEntry = DeliverEntry | KickEntry | AckEntry | PullEntry | InvalidateEntry | SessionsEntry | ChannelEntry;

/** Receives the entries addressed to this node; `from` is the sending node. XACK waits for its promise. */
export type BusHandler = (entry: BusEntry, from: number) => void | Promise<void>;

export interface Bus {
  readonly nodeId: number;
  /**
   * Queues `entry` for node `to` and returns at once. Entries for this node
   * are handed to the local handler in a microtask, never through Redis;
   * others leave in one pipelined batch per event-loop tick. While Redis is
   * down they are buffered (bounded) and sent when it returns.
   */
  send(to: number, entry: BusEntry): void;
  /** Starts consuming this node's inbox (reclaiming entries left pending by a previous process first). */
  start(handler: BusHandler): Promise<void>;
  /** Resolves when everything queued so far has left (or is buffered because Redis is down). */
  flush(): Promise<void>;
  /** False while the shared transport (Redis) is unreachable; always true in memory. */
  ready(): boolean;
  /** Flushes, stops consuming, releases connections it owns. */
  close(): Promise<void>;
}
