/**
 * Group commit: callers enqueue items and get a promise (or a callback) when
 * the batch holding their item has committed. Up to `depth` batches are in
 * flight at once (with `largeLane`, a large item's batch beside them); items
 * arriving meanwhile form the next batch, so a busy node writes many items per
 * round trip and an idle one adds no latency (flush on the next macrotask). A batch settles once it is written
 * and every earlier batch it shares an ordering key with (`keyOf`: the sender)
 * has settled, so one sender's acknowledgements keep their order even when a
 * later batch commits first, while a slow batch (a 16 MiB message) holds up
 * only its own senders. Without `keyOf`, batches settle in the order formed.
 */
type Waiter<T, R> = { item: T; size: number; resolve: (r: R) => void; reject: (e: unknown) => void };
type Outcome<R> = { ok: true; results: R[] } | { ok: false; err: unknown };

/** What `add` rejects with when the queue is at its bound or the store is failing (answered, never queued). */
export class StoreUnavailable extends Error {
  constructor(readonly reason: "queue_full" | "store_failing") {
    super(reason === "queue_full" ? "store queue full" : "store failing");
  }
}

// One instance per reason: a flood of refusals while the store is down allocates no error (and no stack) each.
const QUEUE_FULL = new StoreUnavailable("queue_full");
const STORE_FAILING = new StoreUnavailable("store_failing");

/** How batches are formed and ordered. */
export interface BatchOrder<T> {
  /**
   * The item's ordering key (its sender): a batch waits only for earlier
   * batches holding the same key. undefined orders the item after every
   * earlier batch and every later batch after it.
   */
  readonly keyOf?: (item: T) => unknown;
  /** A batch stops taking items past this many `sizeOf` bytes (it always takes one): a large item goes alone. */
  readonly batchBytes?: number;
  /**
   * A lone item over `batchBytes` (a 16 MiB message) is written in a lane of its own, one at a time, and takes
   * none of the `depth` slots: small batches keep going beside its long insert.
   */
  readonly largeLane?: boolean;
  /**
   * Slots past the first open only while the batches in flight weigh less than this in all (`weightOf`, 1 an item
   * by default). Light load: an item goes out at once instead of waiting for another batch's commit, and a commit
   * the scheduler stalls holds up only its own items and later ones of their keys. Heavy load: batches in flight
   * are heavy, so one is in flight and the next grows while it commits (fewer, larger commits cost the node and
   * the database less per item). undefined: `depth` alone.
   */
  readonly overlapBelow?: number;
  /** An item's weight against `overlapBelow` (one that weighs `overlapBelow` keeps every other batch from going out beside its own). */
  readonly weightOf?: (item: T) => number;
  /**
   * A batch in flight longer than this (ms) gives its slot and weight back: the next batch goes out beside it
   * instead of every item waiting for a statement stuck on a lock (or pipelined behind one). At most `depth`
   * such batches beyond the slots, so a database slow for everyone is not sent ever more at once; none while the
   * store is failing (a batch failed: every connection is stuck, not one statement, and the slots alone probe it).
   * undefined: never.
   */
  readonly stallMs?: number;
}

/** A formed batch until it settled: its keys (undefined: ordered against all) and its settlement. */
interface Formed {
  readonly keys: Set<unknown> | undefined;
  settled: Promise<void>;
}

const overlaps = (a: Set<unknown>, b: Set<unknown>) => {
  for (const k of a) if (b.has(k)) return true;
  return false;
};

export interface QueueBounds<T> {
  /** Items waiting (not in flight) at most. */
  readonly maxItems: number;
  /** Their summed `sizeOf` at most (payload bytes). */
  readonly maxBytes: number;
  readonly sizeOf: (item: T) => number;
}

/**
 * The queue is bounded (count and bytes): a store that is slow or gone must not
 * turn waiting items into unbounded memory. After a failed batch the store
 * counts as failing: only one batch's worth waits (the next attempt, a probe),
 * the rest is refused at once, and the first batch that commits again ends it.
 */
export class GroupCommit<T, R> {
  #queue: Waiter<T, R>[] = [];
  #inflight = 0;
  /** The weight of the small batches in flight (`overlapBelow`). */
  #inflightWeight = 0;
  /** Large items in flight in their lane (`largeLane`): 0 or 1. */
  #large = 0;
  /** Settles after every batch formed so far settled its callers (flush). */
  #tail: Promise<void> = Promise.resolve();
  /** Batches formed and not settled yet, oldest first. */
  #open: Formed[] = [];
  #scheduled = false;
  #queuedBytes = 0;
  /** The last batch failed: the store is taken as unavailable until one commits. */
  #failing = false;
  /** Batches sent and not answered yet by the database (forEachUnanswered). */
  readonly #writing = new Set<readonly T[]>();
  /** Batches written so far (metrics, tests). */
  batches = 0;
  /** The small batches in flight, oldest first, when they went out and their weight (`stallMs`). */
  readonly #sent: { readonly at: number; readonly weight: number }[] = [];
  #stallTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    /** `lane`: the batch is a large item in its lane of its own (`largeLane`). */
    private readonly write: (items: T[], lane: boolean) => Promise<R[]>,
    private readonly maxBatch: number,
    readonly depth = 1,
    private readonly bounds: QueueBounds<T> = { maxItems: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER, sizeOf: () => 0 },
    readonly order: BatchOrder<T> = {},
  ) {}

  /** Settles with the item's result once its batch committed; rejects when the batch failed or with StoreUnavailable. */
  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => this.enqueue(item, resolve, reject));
  }

  /**
   * `add` without a promise: `done` or `failed` is called once, `failed` at once when the item is refused
   * (StoreUnavailable). The hot uplink path uses it (a promise and its reactions per message cost more than
   * the callbacks they end in). A callback that throws is the caller's to catch: the batch's other callers
   * still run.
   */
  enqueue(item: T, done: (r: R) => void, failed: (e: unknown) => void): void {
    const size = this.bounds.sizeOf(item);
    const maxItems = this.#failing ? Math.min(this.maxBatch, this.bounds.maxItems) : this.bounds.maxItems;
    // An empty queue always takes one item (a single message larger than the byte bound is still written).
    if (this.#queue.length && (this.#queue.length >= maxItems || this.#queuedBytes + size > this.bounds.maxBytes)) {
      return failed(this.#failing ? STORE_FAILING : QUEUE_FULL);
    }
    this.#queue.push({ item, size, resolve: done, reject: failed });
    this.#queuedBytes += size;
    this.#kick();
  }

  /** Whether the last batch failed (and none has committed since). */
  get failing(): boolean {
    return this.#failing;
  }

  /** Settles once everything enqueued so far is written. */
  async flush(): Promise<void> {
    while (this.#queue.length || this.#inflight || this.#large) {
      this.#run();
      await this.#tail;
    }
  }

  get pending(): number {
    return this.#queue.length;
  }

  /**
   * Every item queued or sent and not answered yet: what may still commit
   * (the writer's watermark, src/delivery/floors.ts). Walks them all: for a
   * timer, not for each item.
   */
  forEachUnanswered(fn: (item: T) => void): void {
    for (const w of this.#queue) fn(w.item);
    for (const items of this.#writing) for (const item of items) fn(item);
  }

  /** Whether the queue's head may be written now: a slot (or the large lane) is free for it. */
  #canRun(): boolean {
    const head = this.#queue[0];
    if (!head) return false;
    if (this.#inLane(head)) return this.#large === 0;
    if (this.#inflight === 0) return true;
    const below = this.order.overlapBelow;
    let inflight = this.#inflight;
    let weight = this.#inflightWeight;
    const stallMs = this.order.stallMs;
    // #inflight > 0: #sent holds those batches, oldest first.
    const cut = stallMs === undefined || this.#failing ? -Infinity : performance.now() - stallMs;
    if (this.#sent[0]!.at <= cut) {
      if (inflight >= 2 * this.depth) return false;
      // Stalled batches (the oldest ones) hold no slot.
      for (const b of this.#sent) {
        if (b.at > cut) break;
        inflight--;
        weight -= b.weight;
      }
      if (inflight === 0) return true;
    }
    return inflight < this.depth && (below === undefined || weight < below);
  }

  /** With items waiting for a slot: look again once the oldest batch in flight counts as stalled. */
  #watchStall(): void {
    const stallMs = this.order.stallMs;
    if (stallMs === undefined || this.#stallTimer || !this.#queue.length) return;
    // The next batch to stall (the oldest one not stalled yet); none: a batch's answer kicks the queue.
    const now = performance.now();
    const next = this.#sent.find((b) => b.at > now - stallMs);
    if (!next) return;
    const due = next.at + stallMs - now;
    this.#stallTimer = setTimeout(() => {
      this.#stallTimer = undefined;
      this.#run();
      this.#watchStall();
    }, Math.max(1, Math.ceil(due)));
    this.#stallTimer.unref?.();
  }

  #weight(batch: readonly Waiter<T, R>[]): number {
    const weightOf = this.order.weightOf;
    if (!weightOf) return batch.length;
    let w = 0;
    for (const b of batch) w += weightOf(b.item);
    return w;
  }

  #inLane(w: Waiter<T, R>): boolean {
    return this.order.largeLane === true && this.order.batchBytes !== undefined && w.size > this.order.batchBytes;
  }

  #kick(): void {
    if (!this.#canRun()) return this.#watchStall();
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#run();
    });
  }

  #run(): void {
    while (this.#canRun()) {
      const lane = this.#inLane(this.#queue[0]!);
      const batch = this.#take(); // a lane's item goes alone: it is over the byte budget
      for (const b of batch) this.#queuedBytes -= b.size;
      this.batches++;
      const weight = lane ? 0 : this.#weight(batch);
      const sent = lane ? undefined : { at: performance.now(), weight };
      if (lane) this.#large++;
      else {
        this.#inflight++;
        this.#inflightWeight += weight;
        this.#sent.push(sent!);
      }
      const items = batch.map((b) => b.item);
      this.#writing.add(items);
      const written: Promise<Outcome<R>> = this.write(items, lane).then(
        (results) => ({ ok: true, results }),
        (err: unknown) => ({ ok: false, err }),
      );
      // A slot is the database's: it frees when the database answered, not when the batch settles (a batch waiting
      // for an earlier one of its senders, a large insert in the lane, must not keep everyone else's from the database).
      void written.then((out) => {
        this.#writing.delete(items);
        this.#failing = !out.ok;
        if (lane) this.#large--;
        else {
          this.#inflight--;
          this.#inflightWeight -= weight;
          this.#sent.splice(this.#sent.indexOf(sent!), 1);
        }
        if (this.#queue.length) this.#kick();
      });
      const keyOf = this.order.keyOf;
      const keys = keyOf && !batch.some((b) => keyOf(b.item) === undefined) ? new Set(batch.map((b) => keyOf(b.item))) : undefined;
      const before = this.#open.filter((f) => !keys || !f.keys || overlaps(f.keys, keys)).map((f) => f.settled);
      const formed: Formed = { keys, settled: Promise.resolve() };
      formed.settled = Promise.all([written, ...before]).then(([out]) => {
        for (let i = 0; i < batch.length; i++) {
          const b = batch[i]!;
          try {
            if (out.ok) b.resolve(out.results[i]!);
            else b.reject(out.err);
          } catch {
            // enqueue's callbacks catch their own errors; one that did not must not skip the others
          }
        }
        this.#open.splice(this.#open.indexOf(formed), 1);
      });
      this.#open.push(formed);
      this.#tail = Promise.all([this.#tail, formed.settled]).then(() => undefined);
    }
  }

  /** The next batch: up to maxBatch items, and up to `batchBytes` of them (at least one). */
  #take(): Waiter<T, R>[] {
    const budget = this.order.batchBytes;
    if (budget === undefined) return this.#queue.splice(0, this.maxBatch);
    let n = 0;
    let bytes = 0;
    while (n < this.#queue.length && n < this.maxBatch && (n === 0 || bytes + this.#queue[n]!.size <= budget)) bytes += this.#queue[n++]!.size;
    return this.#queue.splice(0, n);
  }
}
