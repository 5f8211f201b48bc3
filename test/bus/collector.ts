import type { BusEntry, BusHandler } from "../../src/bus/bus.ts";

/** A bus handler that records what it receives and lets a test await a count (no sleeping). */
export class Collector {
  readonly got: { entry: BusEntry; from: number }[] = [];
  #waiters: { n: number; resolve: () => void }[] = [];

  readonly handler: BusHandler = (entry, from) => {
    this.got.push({ entry, from });
    this.#waiters = this.#waiters.filter((w) => (this.got.length >= w.n ? (w.resolve(), false) : true));
  };

  /** Resolves once `n` entries have arrived in total. */
  waitFor(n: number): Promise<void> {
    if (this.got.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ n, resolve }));
  }
}

/**
 * Awaits `cond()` turning true, checking every 20 ms. It gives up after
 * `withinMs` with an error whose stack names the waiting line: a test that
 * hit its own timeout instead would not say which wait never ended.
 */
export async function until(cond: () => boolean | Promise<boolean>, withinMs = 20_000): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error(`condition still false after ${withinMs} ms`);
    await Bun.sleep(20);
  }
}
