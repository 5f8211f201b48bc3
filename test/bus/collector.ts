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

/** Awaits `cond()` turning true, checking every 20 ms (the test timeout bounds it). */
export async function until(cond: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await cond())) await Bun.sleep(20);
}
