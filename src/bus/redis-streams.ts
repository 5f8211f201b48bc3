/**
 * The Redis Streams bus. Node N's inbox is the stream `<prefix>node:<N>`,
 * read by this process through the consumer group `ibis` on a dedicated
 * connection (XREADGROUP BLOCK). An entry is XACKed once the local hand-off
 * is done; entries read but never acknowledged (a crash, a lost reply, a
 * failed XACK) stay pending and are claimed back with XAUTOCLAIM when the
 * consumer (re)connects. Outgoing entries are XADDed in one pipeline per
 * event-loop tick with MAXLEN ~ trimming, and buffered (bounded) while Redis
 * is down. See docs/cluster.md.
 */
import type Redis from "ioredis";
import type { Logger } from "../log.ts";
import { duplicateRedis } from "../cluster/redis.ts";
import type { Bus, BusEntry, BusHandler } from "./bus.ts";
import { decodeEntry, encodeEntry, type FieldValue } from "./entry-codec.ts";
import { handOff, Inbox } from "./inbox.ts";
import { metrics } from "../metrics/index.ts";

export const BUS_GROUP = "ibis";
/** Acknowledged ids remembered against a late reclaim (one XAUTOCLAIM batch is at most `batch`, 512). */
const RECENT_ACKED = 4096;
export const INBOX_TTL_MS = 24 * 3600 * 1000;

export interface RedisBusOptions {
  /** Shared command connection (XADD, XACK, XAUTOCLAIM); not closed by the bus. */
  readonly redis: Redis;
  readonly nodeId: number;
  /** Key prefix, e.g. "ibis:" (tests use a unique one per run). */
  readonly prefix: string;
  /** Approximate length each inbox stream is trimmed to. */
  readonly maxLen: number;
  /** Outgoing entries kept while Redis is down; the oldest are dropped beyond it. */
  readonly bufferMax: number;
  readonly log: Logger;
  /** XREADGROUP BLOCK milliseconds (also how long close() may wait for the reader). */
  readonly blockMs?: number;
  /** Entries per XREADGROUP / XAUTOCLAIM / pipeline. */
  readonly batch?: number;
  /** Consumer name; one per process. */
  readonly consumer?: string;
}

type StreamEntry = [id: Buffer, fields: Buffer[] | null];

export const inboxKey = (prefix: string, nodeId: number): string => `${prefix}node:${nodeId}`;

export class RedisStreamsBus implements Bus {
  readonly nodeId: number;
  readonly #o: Required<RedisBusOptions>;
  readonly #key: string;
  readonly #reader: Redis;
  readonly #local: Inbox;
  #handler: BusHandler | undefined;
  #out: { to: number; fields: FieldValue[] }[] = [];
  #tick: ReturnType<typeof setImmediate> | undefined;
  #sending: Promise<void> | undefined;
  #sendFailed = false;
  #dropped = 0;
  #loop: Promise<void> | undefined;
  #closed = false;
  /** Stream ids handed off locally whose XACK has not been confirmed yet. */
  readonly #unacked = new Set<string>();
  /**
   * The latest ids whose XACK was confirmed, oldest first (at most RECENT_ACKED).
   * After a Redis restart the XACK of a held id (sent on the command
   * connection when it is ready) and the reader's XAUTOCLAIM race: the claim
   * can still list the id while its XACK is confirmed before the claimed
   * batch is looked at, and it was handed off a second time (seen in CI).
   */
  readonly #acked = new Set<string>();
  #ackedOrder: string[] = [];

  constructor(opts: RedisBusOptions) {
    this.#o = {
      blockMs: 2000,
      batch: 512,
      consumer: `c-${process.pid}-${crypto.randomUUID().slice(0, 8)}`,
      ...opts,
    };
    this.nodeId = opts.nodeId;
    this.#key = inboxKey(opts.prefix, opts.nodeId);
    this.#local = new Inbox(opts.log);
    this.#reader = duplicateRedis(opts.redis, opts.log, `ibis-bus-${opts.nodeId}`);
    opts.redis.on("ready", this.#onRedisReady);
  }

  send(to: number, entry: BusEntry): void {
    if (this.#closed) return;
    if (to === this.nodeId) return this.#local.push(entry, this.nodeId);
    this.#out.push({ to, fields: encodeEntry(entry, this.nodeId) });
    if (this.#out.length > this.#o.bufferMax) {
      this.#out.splice(0, this.#out.length - this.#o.bufferMax);
      if (this.#dropped++ === 0) this.#o.log.warn("bus buffer full, dropping oldest entries", { max: this.#o.bufferMax });
    }
    this.#tick ??= setImmediate(() => {
      this.#tick = undefined;
      void this.#send();
    });
  }

  async start(handler: BusHandler): Promise<void> {
    this.#handler = handler;
    this.#local.start(handler);
    for (let i = 0; i < 50 && this.#reader.status !== "ready"; i++) await this.#readerReady();
    await this.#prepare();
    this.#loop = this.#consume();
  }

  async flush(): Promise<void> {
    if (this.#tick) {
      clearImmediate(this.#tick);
      this.#tick = undefined;
    }
    await this.#send();
    await this.#local.drained();
  }

  ready(): boolean {
    return this.#o.redis.status === "ready" && this.#reader.status === "ready" && !this.#sendFailed;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.flush();
    this.#closed = true;
    this.#o.redis.off("ready", this.#onRedisReady);
    this.#reader.disconnect(); // unblocks XREADGROUP
    await this.#loop;
    await this.#ackNow([...this.#unacked]).catch(() => {});
  }

  readonly #onRedisReady = () => {
    void this.#send();
    if (this.#unacked.size) void this.#ackNow([...this.#unacked]).catch(() => {});
  };

  /** Sends the queued entries in pipelines; on failure puts them back and waits for "ready". */
  #send(): Promise<void> {
    // .finally runs after the assignment even when the loop finishes synchronously.
    this.#sending ??= this.#sendLoop().finally(() => {
      this.#sending = undefined;
    });
    return this.#sending;
  }

  async #sendLoop(): Promise<void> {
    while (this.#out.length && this.#o.redis.status === "ready") {
      const batch = this.#out.splice(0, this.#o.batch);
      const p = this.#o.redis.pipeline();
      const nodes = new Set<number>();
      for (const { to, fields } of batch) {
        p.xadd(inboxKey(this.#o.prefix, to), "MAXLEN", "~", this.#o.maxLen, "*", ...fields);
        nodes.add(to);
      }
      // An inbox nobody writes to for a day goes away (a node id that never comes back); its reader recreates it.
      for (const to of nodes) p.pexpire(inboxKey(this.#o.prefix, to), INBOX_TTL_MS);
      const results = await p.exec().catch(() => null);
      const failed = results === null ? batch : batch.filter((_, i) => results[i]?.[0]); // XADD results come first
      if (failed.length && this.#o.redis.status !== "ready") {
        // Connection lost mid-batch: resend what may not have landed (at least once).
        this.#out.unshift(...failed);
        this.#sendFailed = true;
        return;
      }
      if (failed.length) this.#o.log.error("bus XADD refused", { count: failed.length, err: results?.find((r) => r[0])?.[0] });
    }
    this.#sendFailed = this.#out.length > 0;
    if (!this.#sendFailed) this.#dropped = 0;
  }

  /** Creates the group (from the stream's start, so entries added after a Redis restart are read), then claims pending ones. */
  async #prepare(): Promise<void> {
    try {
      await this.#reader.call("XGROUP", "CREATE", this.#key, BUS_GROUP, "0", "MKSTREAM");
    } catch (e) {
      if (!String((e as Error).message).includes("BUSYGROUP")) throw e;
    }
    await this.#reader.pexpire(this.#key, INBOX_TTL_MS); // an inbox nobody ever writes to does not stay forever
    let cursor = "0-0";
    do {
      const [next, entries] = (await this.#reader.callBuffer(
        "XAUTOCLAIM", this.#key, BUS_GROUP, this.#o.consumer, 0, cursor, "COUNT", this.#o.batch,
      )) as [Buffer, StreamEntry[], Buffer[]?];
      cursor = next.toString();
      await this.#handle(entries);
    } while (cursor !== "0-0" && !this.#closed);
  }

  async #consume(): Promise<void> {
    let prepared = true;
    while (!this.#closed) {
      try {
        if (!prepared) {
          await this.#prepare();
          prepared = true;
        }
        const res = (await this.#reader.callBuffer(
          "XREADGROUP", "GROUP", BUS_GROUP, this.#o.consumer, "COUNT", this.#o.batch, "BLOCK", this.#o.blockMs,
          "STREAMS", this.#key, ">",
        )) as [Buffer, StreamEntry[]][] | null;
        if (res) for (const [, entries] of res) await this.#handle(entries);
      } catch (e) {
        if (this.#closed) break;
        // Lost connection or lost group (Redis restarted empty): reconnect, recreate, reclaim.
        prepared = false;
        if (!String((e as Error).message).includes("NOGROUP")) await this.#readerReady();
      }
    }
  }

  #readerReady(): Promise<void> {
    if (this.#reader.status === "ready") return new Promise((r) => setTimeout(r, 100));
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#reader.off("ready", done);
        resolve();
      };
      const timer = setTimeout(done, 1000);
      this.#reader.once("ready", done);
    });
  }

  async #handle(entries: readonly StreamEntry[]): Promise<void> {
    if (!entries.length) return;
    metrics.busRead(entries[0]![0]);
    const ids: string[] = [];
    const batch: { entry: BusEntry; from: number }[] = [];
    for (const [rawId, fields] of entries) {
      const id = rawId.toString();
      ids.push(id);
      if (this.#unacked.has(id) || this.#acked.has(id) || !fields) continue; // already handed off, or trimmed away
      const decoded = decodeEntry(fields);
      if (decoded) batch.push(decoded);
      else this.#o.log.warn("bus entry not understood", { id });
    }
    await handOff(this.#handler!, batch, this.#o.log);
    for (const id of ids) this.#unacked.add(id);
    await this.#ackNow(ids).catch(() => {}); // stays in #unacked; retried when Redis is ready again
  }

  /**
   * XACKs `ids`; when nothing older is left unacknowledged, also trims the
   * inbox below the newest of them, so a live node's stream holds its backlog
   * only (MAXLEN caps the inbox of a node that is gone).
   */
  async #ackNow(ids: string[]): Promise<void> {
    if (!ids.length) return;
    const p = this.#o.redis.pipeline().xack(this.#key, BUS_GROUP, ...ids);
    if (ids.length >= this.#unacked.size) p.xtrim(this.#key, "MINID", "~", ids.reduce((a, b) => (compareIds(a, b) >= 0 ? a : b)));
    const results = await p.exec();
    if (!results || results[0]![0]) throw results?.[0]![0] ?? new Error("XACK failed");
    for (const id of ids) {
      this.#unacked.delete(id);
      this.#acked.add(id);
      this.#ackedOrder.push(id);
    }
    if (this.#ackedOrder.length > 2 * RECENT_ACKED) {
      const old = this.#ackedOrder.length - RECENT_ACKED;
      for (let i = 0; i < old; i++) this.#acked.delete(this.#ackedOrder[i]!);
      this.#ackedOrder = this.#ackedOrder.slice(old);
    }
  }
}

/** Orders two stream ids ("<ms>-<seq>"). */
export function compareIds(a: string, b: string): number {
  const [am = "0", as = "0"] = a.split("-");
  const [bm = "0", bs = "0"] = b.split("-");
  return am.length !== bm.length ? am.length - bm.length : am !== bm ? (am < bm ? -1 : 1) : Number(as) - Number(bs);
}
