/**
 * Group commit: callers enqueue items and get a promise that settles when the
 * batch holding their item has committed. Up to `depth` batches are in flight
 * at once (a database commit is mostly waiting for the disk, so a second
 * batch overlaps the first's fsync); items arriving meanwhile form the next
 * batch, so a busy node writes many items per round trip and an idle one adds
 * no latency (flush on the next macrotask). Batches settle in the order they
 * were formed, so one sender's acknowledgements keep their order even when a
 * later batch commits first.
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
  /** Settles after the last formed batch settled its callers (in-order settlement). */
  #tail: Promise<void> = Promise.resolve();
  #scheduled = false;
  #queuedBytes = 0;
  /** The last batch failed: the store is taken as unavailable until one commits. */
  #failing = false;
  /** Batches written so far (metrics, tests). */
  batches = 0;

  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly maxBatch: number,
    private readonly depth = 1,
    private readonly bounds: QueueBounds<T> = { maxItems: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER, sizeOf: () => 0 },
  ) {}

  /** Settles with the item's result once its batch committed; rejects when the batch failed or with StoreUnavailable. */
  add(item: T): Promise<R> {
    const size = this.bounds.sizeOf(item);
    const maxItems = this.#failing ? Math.min(this.maxBatch, this.bounds.maxItems) : this.bounds.maxItems;
    // An empty queue always takes one item (a single message larger than the byte bound is still written).
    if (this.#queue.length && (this.#queue.length >= maxItems || this.#queuedBytes + size > this.bounds.maxBytes)) {
      return Promise.reject(this.#failing ? STORE_FAILING : QUEUE_FULL);
    }
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, size, resolve, reject });
      this.#queuedBytes += size;
      this.#kick();
    });
  }

  /** Whether the last batch failed (and none has committed since). */
  get failing(): boolean {
    return this.#failing;
  }

  /** Settles once everything enqueued so far is written. */
  async flush(): Promise<void> {
    while (this.#queue.length || this.#inflight) {
      this.#run();
      await this.#tail;
    }
  }

  get pending(): number {
    return this.#queue.length;
  }

  #kick(): void {
    if (this.#inflight >= this.depth || this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#run();
    });
  }

  #run(): void {
    while (this.#inflight < this.depth && this.#queue.length) {
      const batch = this.#queue.splice(0, this.maxBatch);
      for (const b of batch) this.#queuedBytes -= b.size;
      this.batches++;
      this.#inflight++;
      const written: Promise<Outcome<R>> = this.write(batch.map((b) => b.item)).then(
        (results) => ({ ok: true, results }),
        (err: unknown) => ({ ok: false, err }),
      );
      const before = this.#tail;
      void written.then((out) => (this.#failing = !out.ok));
      this.#tail = Promise.all([written, before]).then(([out]) => {
        if (out.ok) batch.forEach((b, i) => b.resolve(out.results[i]!));
        else batch.forEach((b) => b.reject(out.err));
        this.#inflight--;
        if (this.#queue.length) this.#kick();
      });
    }
  }
}
