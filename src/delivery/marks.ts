/**
 * Per-device delivery marks between the acknowledgement and the database
 * (docs/delivery.md "Marks"). An ack is recorded in a share every node reads
 * (process memory alone, or Redis in a cluster), CLIENT_ACK_CONFIRM goes out,
 * and the marks reach `delivery_mark` (inbox messages) or the device's
 * timeline cursors (group messages) in large background batches. Offline
 * pulls subtract the share's marks from the committed ones, so a pull on any
 * node right after a confirm never lists the acknowledged message.
 */
import type { MarkRow } from "./writer.ts";
import { metrics } from "../metrics/index.ts";

/** Marks acknowledged but maybe not committed yet, as every node sees them. */
export interface MarkShare {
  /** Records marks; resolves (or returns) once every node can see them. */
  add(marks: readonly MarkRow[]): void | Promise<void>;
  /** These marks are committed to the database: the share may forget them. */
  drop(marks: readonly MarkRow[]): void | Promise<void>;
  /** A device's marks that may not be committed yet. */
  of(userId: bigint, deviceId: string): readonly MarkRow[] | Promise<readonly MarkRow[]>;
  /** Marks read back may be a dead node's, never committed: the reader writes them (idempotent). */
  readonly repairs?: boolean;
}

/** A mark as one Redis set member: the server id of an inbox message, or `<conv>:<seq>` of a timeline entry. */
export const markToken = (m: MarkRow): string => (m.seq === undefined ? m.messageId.toString() : `${m.conv}:${m.seq}`);

export function markOfToken(userId: bigint, deviceId: string, token: string): MarkRow {
  const cut = token.indexOf(":");
  if (cut < 0) return { userId, deviceId, messageId: BigInt(token) };
  return { userId, deviceId, messageId: 0n, conv: BigInt(token.slice(0, cut)), seq: BigInt(token.slice(cut + 1)) };
}

/** One device's marks in memory: inbox marks by server id, timeline acks by conversation and number. */
interface Held {
  readonly ids: Map<bigint, MarkRow>;
  readonly convs: Map<bigint, Map<bigint, MarkRow>>;
}

/** The share of a node alone: process memory (nested maps: no key string built per ack). */
export class MemoryMarkShare implements MarkShare {
  readonly #byUser = new Map<bigint, Map<string, Held>>();

  add(marks: readonly MarkRow[]): void {
    for (const m of marks) {
      let devices = this.#byUser.get(m.userId);
      if (!devices) this.#byUser.set(m.userId, (devices = new Map()));
      let held = devices.get(m.deviceId);
      if (!held) devices.set(m.deviceId, (held = { ids: new Map(), convs: new Map() }));
      if (m.seq === undefined) {
        held.ids.set(m.messageId, m);
        continue;
      }
      let seqs = held.convs.get(m.conv!);
      if (!seqs) held.convs.set(m.conv!, (seqs = new Map()));
      seqs.set(m.seq, m);
    }
  }

  drop(marks: readonly MarkRow[]): void {
    for (const m of marks) {
      const devices = this.#byUser.get(m.userId);
      const held = devices?.get(m.deviceId);
      if (!held) continue;
      if (m.seq === undefined) held.ids.delete(m.messageId);
      else {
        const seqs = held.convs.get(m.conv!);
        if (seqs?.delete(m.seq) && !seqs.size) held.convs.delete(m.conv!);
      }
      if (held.ids.size || held.convs.size) continue;
      devices!.delete(m.deviceId);
      if (!devices!.size) this.#byUser.delete(m.userId);
    }
  }

  of(userId: bigint, deviceId: string): readonly MarkRow[] {
    const held = this.#byUser.get(userId)?.get(deviceId);
    if (!held) return [];
    const out = [...held.ids.values()];
    for (const seqs of held.convs.values()) for (const m of seqs.values()) out.push(m);
    return out;
  }

  /** Marks held (tests, metrics). */
  get size(): number {
    let n = 0;
    for (const devices of this.#byUser.values()) {
      for (const held of devices.values()) {
        n += held.ids.size;
        for (const seqs of held.convs.values()) n += seqs.size;
      }
    }
    return n;
  }
}

const RETRY_MS = 1_000;

/**
 * The mark path of one node: `record` makes marks visible to every node and
 * queues them for the database, where they go in batches (one in flight; no
 * promise per mark: a group of 1,000 acks every message). A failed batch is
 * queued again after a second (its marks stay in the share meanwhile, so
 * pulls stay exact); a node that dies first loses at most its unwritten
 * batches: those messages are delivered once more (ids deduplicate), never lost.
 */
export class MarkLedger {
  #queue: MarkRow[] = [];
  #running: Promise<void> | undefined;
  #scheduled = false;
  /** The wait for the tick, while a small batch waits for it (a full one cancels it and goes). */
  #tickTimer: ReturnType<typeof setTimeout> | undefined;
  /** When the last batch started (performance.now()): the next waits out the tick from here. */
  #lastStart = -Infinity;
  /** Marks ever queued, and marks whose batch has finished (written, or failed and queued again): FIFO counters. */
  #queued = 0;
  #done = 0;
  /** `record` callers whose share failed, each waiting until the marks queued up to `upTo` are done. */
  #waiters: { upTo: number; resolve: () => void }[] = [];

  constructor(
    private readonly share: MarkShare,
    private readonly write: (rows: readonly MarkRow[]) => Promise<unknown>,
    private readonly maxBatch: number,
    private readonly onError: (err: unknown) => void,
    /** Marks waiting at most: a store down for long drops the oldest (delivered again later, never lost). */
    private readonly maxQueued = Number.MAX_SAFE_INTEGER,
    /** Least ms between two batch starts: acks arriving meanwhile coalesce (one cursor row per device and group). */
    private readonly tickMs = 0,
  ) {}

  /**
   * Records one device's marks. Resolves when every node's pull excludes them:
   * at once in one process, after the Redis round trip in a cluster, or — the
   * share unreachable — after the database commit.
   */
  record(marks: readonly MarkRow[]): Promise<void> | undefined {
    this.#enqueue(marks);
    const upTo = this.#queued;
    let shared: void | Promise<void>;
    try {
      shared = this.share.add(marks);
    } catch (err) {
      shared = Promise.reject(err);
    }
    if (shared === undefined) return undefined;
    return shared.catch((err: unknown) => {
      this.onError(err);
      // The marks were queued above: wait for their batch (not for a queue that keeps filling).
      return upTo <= this.#done ? undefined : new Promise<void>((resolve) => this.#waiters.push({ upTo, resolve }));
    });
  }

  /** The device's acknowledged marks that may not be in the database yet. */
  async unconfirmed(userId: bigint, deviceId: string): Promise<readonly MarkRow[]> {
    try {
      const marks = await this.share.of(userId, deviceId);
      if (this.share.repairs && marks.length) this.#enqueue(marks);
      return marks;
    } catch (err) {
      // The share unreachable: committed marks only (a recent ack may be pulled once more).
      this.onError(err);
      return [];
    }
  }

  /** Settles once every mark recorded so far is written (or its batch failed and was queued again). */
  async flush(): Promise<void> {
    while (this.#queue.length || this.#running) {
      if (!this.#running) this.#run();
      await this.#running;
    }
  }

  #enqueue(marks: readonly MarkRow[]): void {
    for (const m of marks) this.#queue.push(m);
    this.#queued += marks.length;
    const over = this.#queue.length - this.maxQueued;
    if (over > 0) {
      const dropped = this.#queue.splice(0, over);
      this.#finished(dropped.length);
      this.onError(new Error(`${dropped.length} marks dropped: the store is not keeping up (those messages are delivered again)`));
      void Promise.resolve()
        .then(() => this.share.drop(dropped))
        .catch(() => {});
    }
    this.#kick();
  }

  /** A batch finished (either way): callers waiting for marks up to here go on. */
  #finished(count: number): void {
    this.#done += count;
    if (!this.#waiters.length) return;
    const still = this.#waiters.filter((w) => w.upTo > this.#done);
    for (const w of this.#waiters) if (w.upTo <= this.#done) w.resolve();
    this.#waiters = still;
  }

  #kick(): void {
    if (this.#running) return;
    // The tick coalesces small batches; a full one goes at once, even while a small one waits for the tick (else the
    // tick would cap the marks written at one batch a tick: 8,192 a second at its largest setting).
    const full = this.#queue.length >= this.maxBatch;
    if (this.#scheduled && !(full && this.#tickTimer)) return;
    clearTimeout(this.#tickTimer);
    this.#tickTimer = undefined;
    this.#scheduled = true;
    const go = () => {
      this.#scheduled = false;
      this.#tickTimer = undefined;
      if (!this.#running) this.#run();
    };
    const wait = full ? 0 : this.#lastStart + this.tickMs - performance.now();
    if (wait > 0) (this.#tickTimer = setTimeout(go, wait)).unref?.();
    else setImmediate(go);
  }

  #run(): void {
    const batch = this.#queue.splice(0, this.maxBatch);
    if (!batch.length) return;
    this.#lastStart = performance.now();
    this.#running = this.write(batch)
      .then(
        () => {
          this.#finished(batch.length);
          return Promise.resolve(this.share.drop(batch)).catch(() => {});
        },
        (err: unknown) => {
          this.#finished(batch.length);
          metrics.dbErrors.inc();
          this.onError(err);
          // Again later, behind what came meanwhile; the share keeps the marks visible until then.
          setTimeout(() => this.#enqueue(batch), RETRY_MS).unref?.();
        },
      )
      .finally(() => {
        this.#running = undefined;
        if (this.#queue.length) this.#kick();
      });
  }
}
