/**
 * Channel pushes to online subscribers (docs/channels.md "Pushes"). A publish
 * stores one row; then one event goes to every live node (the bus `channel`
 * entry) and each node works out which of ITS online users subscribe, in
 * batched queries, and pushes to them. No node ever loads a whole audience:
 * it walks whichever side is smaller, its own online users (chunks of
 * `where user_id = any($2)`) or the channel's subscriptions (paged by user id).
 *
 * `channel_unread_count` is computed per user at push time from the same
 * source the summary reads (last_seq - read_seq), so push and pull agree.
 * Unread events for one channel are coalesced while queued: ten publishes in
 * a burst cost a node one pass, carrying the latest count. Work runs one
 * chunk at a time in the background, so a publish never waits for it and
 * other traffic interleaves between chunks.
 */
import { sql } from "drizzle-orm";
import type { Store } from "../../db/store.ts";
import type { Logger } from "../../log.ts";
import { parseJson } from "../../protocol/json.ts";
import { idArray } from "./context.ts";

export const UNREAD_ACTION = "channel_unread_count";

/** What a node pushes for a channel; the same value travels on the bus (src/bus/bus.ts `ChannelEntry`). */
export interface ChannelEvent {
  readonly channelId: bigint;
  /** channel_unread_count (each subscriber's own count), channel_message_edited or channel_message_revoked. */
  readonly action: string;
  /** JSON text of the payload for every recipient (edited / revoked); unread counts are computed per user. */
  readonly payload?: string;
  /** Only these users (mark read: the caller); absent: every online subscriber. */
  readonly userIds?: readonly bigint[];
  /** The channel's subscriber count as the publisher read it: which side a node walks (else it asks). */
  readonly subscribers?: number;
}

/** This node's online users and the one-user push (implemented over src/ws by src/node.ts). */
export interface LocalPush {
  /** Users with at least one session on this node. */
  users(): Iterable<bigint>;
  readonly userCount: number;
  online(userId: bigint): boolean;
  /** One S2C to every local session of `userId`; returns the number of sessions it went to. */
  push(userId: bigint, action: string, payload: Record<string, unknown>): number;
}

export interface FanoutCounters {
  /** Events processed (after coalescing). */
  events: number;
  /** S2C notices sent (one per session). */
  pushes: number;
  /** Queries run to resolve recipients. */
  queries: number;
}

/** Recipient queries one node runs at once for one event. */
const CHUNKS_IN_FLIGHT = 3;

const yieldToLoop = () => new Promise<void>((r) => setImmediate(r));

export class ChannelFanout {
  readonly counters: FanoutCounters = { events: 0, pushes: 0, queries: 0 };
  readonly #queue: ChannelEvent[] = [];
  /** Channels with a whole-audience unread event queued: later ones are folded into it. */
  readonly #unreadQueued = new Set<bigint>();
  #running: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly local: LocalPush,
    private readonly log: Logger,
    private readonly chunk = 1000,
  ) {}

  /** Queues `event` for this node's users; returns at once. */
  enqueue(event: ChannelEvent): void {
    if (event.action === UNREAD_ACTION && event.userIds === undefined) {
      if (this.#unreadQueued.has(event.channelId)) return;
      this.#unreadQueued.add(event.channelId);
    }
    this.#queue.push(event);
    this.#running ??= this.#drain().finally(() => (this.#running = undefined));
  }

  /** Resolves when everything queued so far is pushed (tests, bench, shutdown). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #drain(): Promise<void> {
    await yieldToLoop(); // the publisher's answer goes out first
    for (let e = this.#queue.shift(); e; e = this.#queue.shift()) {
      if (e.action === UNREAD_ACTION && e.userIds === undefined) this.#unreadQueued.delete(e.channelId);
      try {
        await this.#run(e);
      } catch (err) {
        this.log.warn("channel push failed", { channel_id: e.channelId, action: e.action, err });
      }
    }
  }

  async #run(e: ChannelEvent): Promise<void> {
    this.counters.events++;
    if (this.local.userCount === 0) return;
    const unread = e.action === UNREAD_ACTION;
    const payload = unread ? undefined : (parseJson(e.payload ?? "{}") as Record<string, unknown>);
    const send = (rows: { user_id: unknown; unread: unknown }[]) => {
      for (const r of rows) {
        const userId = BigInt(r.user_id as bigint);
        this.counters.pushes += this.local.push(
          userId,
          e.action,
          payload ?? { channel_id: e.channelId, unread_count: Math.max(0, Number(r.unread)) },
        );
      }
    };
    if (e.userIds) {
      const here = e.userIds.filter((u) => this.local.online(u));
      if (here.length) send(await this.#subscribersAmong(e.channelId, here));
      return;
    }
    // The publisher's count of subscribers picks the side to walk (either side is correct; a stale hint only costs speed).
    let subscribers = e.subscribers;
    if (subscribers === undefined) {
      const [c] = await this.store.rows<{ subscriber_count: unknown }>(
        sql`select subscriber_count from channel where id = ${e.channelId} and deleted_at is null`,
      );
      this.counters.queries++;
      if (!c) return;
      subscribers = Number(c.subscriber_count);
    }
    if (subscribers <= this.local.userCount) {
      // Fewer subscribers than online users here: page through the subscriptions.
      let after = -1n;
      for (;;) {
        const rows = await this.store.rows<{ user_id: unknown; unread: unknown }>(sql`
          select s.user_id, c.last_seq - s.read_seq as unread from channel_subscription s join channel c on c.id = s.channel_id
          where s.channel_id = ${e.channelId} and s.user_id > ${after} and c.deleted_at is null order by s.user_id limit ${this.chunk}`);
        this.counters.queries++;
        send(rows.filter((r) => this.local.online(BigInt(r.user_id as bigint))));
        if (rows.length < this.chunk) return;
        after = BigInt(rows[rows.length - 1]!.user_id as bigint);
        await yieldToLoop();
      }
    }
    // Fewer online users than subscribers: ask about them a chunk at a time, a few chunks in flight
    // (each answer is pushed as it arrives; the pool keeps room for the node's other queries).
    const chunks: bigint[][] = [];
    let batch: bigint[] = [];
    for (const u of this.local.users()) {
      batch.push(u);
      if (batch.length === this.chunk) {
        chunks.push(batch);
        batch = [];
      }
    }
    if (batch.length) chunks.push(batch);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < chunks.length; i = next++) {
        send(await this.#subscribersAmong(e.channelId, chunks[i]!));
        await yieldToLoop();
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHUNKS_IN_FLIGHT, chunks.length) }, worker));
  }

  async #subscribersAmong(channelId: bigint, userIds: readonly bigint[]) {
    this.counters.queries++;
    return this.store.rows<{ user_id: unknown; unread: unknown }>(sql`
      select s.user_id, c.last_seq - s.read_seq as unread from channel_subscription s join channel c on c.id = s.channel_id
      where s.channel_id = ${channelId} and s.user_id = any(${idArray(userIds)}::bigint[]) and c.deleted_at is null`);
  }
}
