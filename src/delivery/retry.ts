/**
 * One bucketed retry schedule per node (a timer wheel keyed by absolute slot
 * number): every pending push to one device is an entry in the slot of its
 * next attempt, and a single interval timer (or a test, with a fake clock)
 * advances the wheel. Cancelling is O(1): the entry is flagged, dropped from
 * its device's index and its place in the slot is emptied, so an acknowledged
 * push (its message, encodings and a large payload's frame) is garbage at
 * once, not when its slot comes round seconds later.
 */
import type { ChatType, Outbound } from "./ports.ts";
import { metrics } from "../metrics/index.ts";

/** Spec §8: delays between successive attempts, ms; the first attempt is the immediate push. */
export const RETRY_SCHEDULE: Readonly<Record<ChatType, readonly number[]>> = {
  C2C: [0, 3000],
  C2G: [0],
  C2S: [0, 5000, 7000, 11000],
  S2C: [0, 1500, 1500, 3000, 5000, 7000],
};

export interface RetryEntry {
  readonly userId: bigint;
  readonly deviceId: string;
  readonly out: Outbound;
  /** Unknown for a push that arrived over the bus (the ack resolves it from the store). */
  readonly serverId?: bigint;
  /** The users the message was pushed to (who may acknowledge it): the push's own array, shared by its entries. */
  readonly inbox?: readonly bigint[];
  readonly schedule: readonly number[];
  /** Index in `schedule` of the next attempt. */
  next: number;
  due: number;
  cancelled: boolean;
  /** Where it waits: its slot, and its place in the slot's list. */
  slot: number;
  at: number;
}

/** Sends one attempt; false when the device has no session here any more (the entry is dropped). */
export type Attempt = (entry: RetryEntry) => boolean;

/**
 * An entry left the wheel unacknowledged: its last attempt was made, its device had no session for an attempt, or
 * the device disconnected. Its ack may still come (after the last push, after a reconnect), and the entry is no
 * longer there to answer it.
 */
export type Unanswered = (entry: RetryEntry) => void;

/** user → device → §2.8 id → live entry (nested maps: no key string built per lookup). */
type DeviceIndex = Map<bigint, Map<string, Map<string, RetryEntry>>>;

export class RetryWheel {
  /** Slot → its entries in order; a cancelled entry's place is emptied (undefined). */
  readonly #slots = new Map<number, (RetryEntry | undefined)[]>();
  /** Per device: §2.8 id → live entry (acks find their entry here). */
  readonly #byDevice: DeviceIndex = new Map();
  #lastSlot: number;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly attempt: Attempt,
    private readonly now: () => number,
    private readonly tickMs: number,
    private readonly unanswered: Unanswered = () => {},
  ) {
    this.#lastSlot = Math.floor(now() / tickMs);
  }

  /** Runs `advance` every tick on a real timer (production). */
  start(): void {
    this.#timer ??= setInterval(() => this.advance(), this.tickMs);
    this.#timer.unref?.();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Tracks a push whose first attempt was just made; whether an entry is kept. Nothing is kept when the
   * schedule has no further attempt (C2G: one best-effort push).
   */
  track(entry: Omit<RetryEntry, "next" | "due" | "cancelled" | "slot" | "at">): boolean {
    if (entry.schedule.length < 2) return false;
    // Every field named (a spread copied the caller's object through the runtime's generic copy, one shape per caller).
    const e: RetryEntry = {
      userId: entry.userId,
      deviceId: entry.deviceId,
      out: entry.out,
      serverId: entry.serverId,
      inbox: entry.inbox,
      schedule: entry.schedule,
      next: 1,
      due: 0,
      cancelled: false,
      slot: 0,
      at: 0,
    };
    let devices = this.#byDevice.get(e.userId);
    if (!devices) this.#byDevice.set(e.userId, (devices = new Map()));
    let device = devices.get(e.deviceId);
    if (!device) devices.set(e.deviceId, (device = new Map()));
    const prior = device.get(e.out.msg.id);
    if (prior) this.#unslot(prior);
    device.set(e.out.msg.id, e);
    this.#schedule(e, this.now());
    return true;
  }

  /** The live entry for a device and §2.8 id, if any. */
  find(userId: bigint, deviceId: string, id: string): RetryEntry | undefined {
    return this.#byDevice.get(userId)?.get(deviceId)?.get(id);
  }

  /** The live entry of a device whose id has this type and tsid segment (frame ACK). */
  findByTsid(userId: bigint, deviceId: string, type: ChatType, tsid: string): RetryEntry | undefined {
    const prefix = `${type}.${tsid}.`;
    for (const [id, e] of this.#byDevice.get(userId)?.get(deviceId) ?? []) if (id.startsWith(prefix)) return e;
    return undefined;
  }

  /**
   * Drops one entry. The device's index stays while the device is connected, empty or not: a device with one
   * message in flight at a time emptied it at every ack and built it again at the next push (two Maps a message);
   * `cancelDevice` (its disconnect) drops it.
   */
  cancel(entry: RetryEntry): void {
    this.#unslot(entry);
    const device = this.#byDevice.get(entry.userId)?.get(entry.deviceId);
    if (device?.get(entry.out.msg.id) === entry) device.delete(entry.out.msg.id);
  }

  /** Flags an entry and empties its place in its slot (a slot being fired was taken out of `#slots` first). */
  #unslot(entry: RetryEntry): void {
    entry.cancelled = true;
    const list = this.#slots.get(entry.slot);
    if (list?.[entry.at] === entry) list[entry.at] = undefined;
  }

  /** Drops every entry of a device (it disconnected: what it lacks stays pending in the store). */
  cancelDevice(userId: bigint, deviceId: string): void {
    const devices = this.#byDevice.get(userId);
    for (const e of devices?.get(deviceId)?.values() ?? []) {
      this.#unslot(e);
      this.unanswered(e);
    }
    devices?.delete(deviceId);
    if (devices && !devices.size) this.#byDevice.delete(userId);
  }

  /** Devices indexed (tests: the index is bounded by the devices connected). */
  get devices(): number {
    let n = 0;
    for (const devices of this.#byDevice.values()) n += devices.size;
    return n;
  }

  /** Live entries (metrics, tests). */
  get size(): number {
    let n = 0;
    for (const devices of this.#byDevice.values()) for (const d of devices.values()) n += d.size;
    return n;
  }

  /** Fires every attempt due up to now. */
  advance(): void {
    const now = this.now();
    const target = Math.floor(now / this.tickMs);
    for (let slot = this.#lastSlot + 1; slot <= target; slot++) {
      const entries = this.#slots.get(slot);
      if (!entries) continue;
      this.#slots.delete(slot);
      for (const e of entries) if (e) this.#fire(e, now);
    }
    this.#lastSlot = Math.max(this.#lastSlot, target);
  }

  #schedule(e: RetryEntry, from: number): void {
    e.due = from + e.schedule[e.next]!;
    // Never into a slot already passed: at the earliest the next one.
    const slot = Math.max(Math.ceil(e.due / this.tickMs), this.#lastSlot + 1);
    let list = this.#slots.get(slot);
    if (!list) this.#slots.set(slot, (list = []));
    e.slot = slot;
    e.at = list.push(e) - 1;
  }

  /** Entries waiting in slots (tests: an acknowledged push leaves its slot at once). */
  get scheduled(): number {
    let n = 0;
    for (const list of this.#slots.values()) for (const e of list) if (e) n++;
    return n;
  }

  #fire(e: RetryEntry, now: number): void {
    if (e.cancelled) return;
    metrics.retries.inc();
    const delivered = this.attempt(e);
    e.next++;
    if (!delivered || e.next >= e.schedule.length) {
      // Last attempt made (or nobody to send to): the message simply stays pending for this device.
      this.cancel(e);
      this.unanswered(e);
      return;
    }
    this.#schedule(e, now);
  }
}
