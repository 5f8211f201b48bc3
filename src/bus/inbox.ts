import type { Logger } from "../log.ts";
import type { BusEntry, BusHandler } from "./bus.ts";

/**
 * Local hand-off: entries queued here reach the handler in one microtask
 * batch, in order. Entries that arrive before `start` wait for it.
 */
export class Inbox {
  #queue: { entry: BusEntry; from: number }[] = [];
  #handler: BusHandler | undefined;
  #scheduled = false;
  #idle: Promise<void> = Promise.resolve();

  constructor(private readonly log: Logger) {}

  start(handler: BusHandler): void {
    this.#handler = handler;
    this.#schedule();
  }

  push(entry: BusEntry, from: number): void {
    this.#queue.push({ entry, from });
    this.#schedule();
  }

  /** Resolves once everything pushed so far has been handed to the handler. */
  drained(): Promise<void> {
    return this.#idle;
  }

  #schedule(): void {
    if (this.#scheduled || !this.#handler || this.#queue.length === 0) return;
    this.#scheduled = true;
    this.#idle = new Promise<void>((resolve) =>
      queueMicrotask(() => {
        this.#scheduled = false;
        const batch = this.#queue;
        this.#queue = [];
        void handOff(this.#handler!, batch, this.log).then(resolve);
      }),
    );
  }
}

/** Calls the handler for each entry; a failing entry is logged, never retried (a poison entry must not stall the inbox). */
export async function handOff(
  handler: BusHandler,
  batch: readonly { entry: BusEntry; from: number }[],
  log: Logger,
): Promise<void> {
  let waits: Promise<void>[] | undefined;
  for (const { entry, from } of batch) {
    try {
      const r = handler(entry, from);
      if (r) (waits ??= []).push(r.catch((e: unknown) => log.error("bus handler failed", { kind: entry.kind, from, err: e as Error })));
    } catch (e) {
      log.error("bus handler failed", { kind: entry.kind, from, err: e as Error });
    }
  }
  if (waits) await Promise.all(waits);
}
