import type { Logger } from "../log.ts";
import type { Bus, BusEntry, BusHandler } from "./bus.ts";
import { Inbox } from "./inbox.ts";

/**
 * The in-process bus (no REDIS_URL): every node of the hub lives in this
 * process. A single Ibis node is a hub of one; tests put several nodes on one
 * hub. Entries for a node that is not on the hub are dropped, like entries
 * for a node that died.
 */
export class MemoryBusHub {
  readonly #nodes = new Map<number, MemoryBus>();

  bus(nodeId: number, log: Logger): MemoryBus {
    if (this.#nodes.has(nodeId)) throw new Error(`node ${nodeId} is already on this hub`);
    const bus = new MemoryBus(nodeId, this, log);
    this.#nodes.set(nodeId, bus);
    return bus;
  }

  /** @internal */
  deliver(to: number, entry: BusEntry, from: number): void {
    this.#nodes.get(to)?.inbox.push(entry, from);
  }

  /** @internal */
  leave(bus: MemoryBus): void {
    if (this.#nodes.get(bus.nodeId) === bus) this.#nodes.delete(bus.nodeId);
  }
}

export class MemoryBus implements Bus {
  /** @internal */
  readonly inbox: Inbox;

  constructor(
    readonly nodeId: number,
    private readonly hub: MemoryBusHub,
    log: Logger,
  ) {
    this.inbox = new Inbox(log);
  }

  send(to: number, entry: BusEntry): void {
    this.hub.deliver(to, entry, this.nodeId);
  }

  async start(handler: BusHandler): Promise<void> {
    this.inbox.start(handler);
  }

  flush(): Promise<void> {
    return this.inbox.drained();
  }

  ready(): boolean {
    return true;
  }

  async close(): Promise<void> {
    this.hub.leave(this);
    await this.inbox.drained();
  }
}
