/**
 * Group commit: callers enqueue items and get a promise that settles when the
 * batch holding their item has committed. One batch is in flight at a time;
 * items arriving meanwhile form the next one, so a busy node writes many
 * items per round trip and an idle one adds no latency (flush on the next
 * macrotask). Order of items is kept across batches.
 */
export class GroupCommit<T, R> {
  #queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  #running: Promise<void> | undefined;
  #scheduled = false;
  /** Batches written so far (metrics, tests). */
  batches = 0;

  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly maxBatch: number,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#kick();
    });
  }

  /** Settles once everything enqueued so far is written. */
  async flush(): Promise<void> {
    while (this.#queue.length || this.#running) {
      if (!this.#running) this.#run();
      await this.#running;
    }
  }

  get pending(): number {
    return this.#queue.length;
  }

  #kick(): void {
    if (this.#running || this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      if (!this.#running) this.#run();
    });
  }

  #run(): void {
    const batch = this.#queue.splice(0, this.maxBatch);
    if (!batch.length) return;
    this.batches++;
    this.#running = this.write(batch.map((b) => b.item)).then(
      (results) => batch.forEach((b, i) => b.resolve(results[i]!)),
      (err) => batch.forEach((b) => b.reject(err)),
    ).finally(() => {
      this.#running = undefined;
      if (this.#queue.length) this.#run();
    });
  }
}
