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
type Waiter<T, R> = { item: T; resolve: (r: R) => void; reject: (e: unknown) => void };
type Outcome<R> = { ok: true; results: R[] } | { ok: false; err: unknown };

export class GroupCommit<T, R> {
  #queue: Waiter<T, R>[] = [];
  #inflight = 0;
  /** Settles after the last formed batch settled its callers (in-order settlement). */
  #tail: Promise<void> = Promise.resolve();
  #scheduled = false;
  /** Batches written so far (metrics, tests). */
  batches = 0;

  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly maxBatch: number,
    private readonly depth = 1,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#kick();
    });
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
      this.batches++;
      this.#inflight++;
      const written: Promise<Outcome<R>> = this.write(batch.map((b) => b.item)).then(
        (results) => ({ ok: true, results }),
        (err: unknown) => ({ ok: false, err }),
      );
      const before = this.#tail;
      this.#tail = Promise.all([written, before]).then(([out]) => {
        if (out.ok) batch.forEach((b, i) => b.resolve(out.results[i]!));
        else batch.forEach((b) => b.reject(out.err));
        this.#inflight--;
        if (this.#queue.length) this.#kick();
      });
    }
  }
}
