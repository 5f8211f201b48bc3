/**
 * Device floors that follow acknowledgements (docs/delivery.md "Floors").
 *
 * A device's pending set is read from its floor up, so a reconnect's check
 * walks every message acknowledged above the floor. Compaction moves floors
 * only past messages minted SETTLE_MS ago (one may still be in a batch), so a
 * device that acknowledged thousands of messages in the last minutes walked
 * them all at every reconnect (bench/FINDINGS.md, 2026-11-28 seventh).
 *
 * Each node publishes a watermark: no message with a smaller id can still
 * commit from it (the least id its writer holds queued, sent and unanswered,
 * or failed in a way that may have committed; else an id just minted). Every
 * tick, the devices whose marks this node wrote get their floors moved up to
 * their first unacknowledged message, never past the least watermark of the
 * running nodes. A node that died without removing its row holds them back
 * for SETTLE_MS, as compaction's bound always did.
 */
import { sql } from "drizzle-orm";
import type { Store } from "../db/store.ts";
import type { Logger } from "../log.ts";
import { SETTLE_MS, type DeviceKey, type InboxReader } from "./inbox.ts";
import type { MarkRow } from "./writer.ts";

/** How often the watermark is written and touched devices' floors move. */
export const FLOOR_TICK_MS = 1_000;

/** This node's watermark, written every tick: a fixed text, prepared once (no SQL built per tick). */
const PUBLISH = `insert into writer_watermark (instance, low_id, seen_at) values ($1, $2::bigint, $3::bigint)
  on conflict (instance) do update set low_id = excluded.low_id, seen_at = excluded.seen_at`;
/** Devices per floor statement, and statements per tick (the rest wait for the next tick). */
const DEVICES_PER_STATEMENT = 500;
const STATEMENTS_PER_TICK = 4;

export class Floors {
  readonly #instance = crypto.randomUUID();
  /** Devices whose marks were written since their floors last moved: user → device ids. */
  readonly #touched = new Map<bigint, Set<string>>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<void> | undefined;
  #started = false;

  constructor(
    private readonly store: Store,
    private readonly inbox: InboxReader,
    /** This node's watermark now (DeliveryWriter.lowWater with an id just minted). */
    private readonly lowWater: () => bigint,
    private readonly now: () => number,
    private readonly log: Logger,
    private readonly tickMs = FLOOR_TICK_MS,
  ) {}

  /** Writes this node's watermark; floors move only once it is in (before it, another node's bound would pass our batches). */
  async start(): Promise<void> {
    await this.#publish();
    this.#started = true;
    this.#timer = setInterval(() => void this.tick(), this.tickMs);
    this.#timer.unref?.();
  }

  /** Marks just committed: their devices' floors may move at the next tick (group entries move cursors, not floors). */
  touch(rows: readonly MarkRow[]): void {
    if (!this.#started) return;
    for (const r of rows) if (r.seq === undefined) this.#touch(r);
  }

  /** One tick: the watermark, then the touched devices' floors. One at a time; a failure is retried next tick. */
  tick(): Promise<void> {
    return (this.#running ??= this.#tick().finally(() => (this.#running = undefined)));
  }

  async #tick(): Promise<void> {
    try {
      await this.#publish();
      // What was touched before this tick: marks written meanwhile wait for the next one (no chase within a tick).
      const devices = this.#take(DEVICES_PER_STATEMENT * STATEMENTS_PER_TICK);
      for (let from = 0; from < devices.length; from += DEVICES_PER_STATEMENT) {
        try {
          await this.inbox.advanceFloors(devices.slice(from, from + DEVICES_PER_STATEMENT), this.now());
        } catch (err) {
          for (const d of devices.slice(from)) this.#touch(d);
          throw err;
        }
      }
    } catch (err) {
      this.log.warn("delivery: floors not moved this tick", { err });
    }
  }

  /**
   * Stops the timer and removes this node's watermark (call after the writer's last batch). A store already gone
   * keeps the row: it stops counting after SETTLE_MS (the floors wait that long, nothing is lost).
   */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#started = false;
    await this.#running;
    await this.store.db
      .execute(sql`delete from writer_watermark where instance = ${this.#instance}`)
      .catch((err: unknown) => this.log.warn("delivery: watermark not removed; it lapses by itself", { err }));
  }

  /** Rows of nodes not seen for SETTLE_MS (they no longer bound anything): the prune's. */
  static async sweep(store: Store, nowMs: number): Promise<void> {
    await store.db.execute(sql`delete from writer_watermark where seen_at < ${nowMs - SETTLE_MS}`);
  }

  async #publish(): Promise<void> {
    // Read before the statement goes out: what it says must hold from the moment it is visible.
    const low = this.lowWater();
    await this.store.query(PUBLISH, [this.#instance, low.toString(), String(this.now())]);
  }

  #touch(d: DeviceKey): void {
    let devices = this.#touched.get(d.userId);
    if (!devices) this.#touched.set(d.userId, (devices = new Set()));
    devices.add(d.deviceId);
  }

  #take(max: number): DeviceKey[] {
    const out: DeviceKey[] = [];
    for (const [userId, devices] of this.#touched) {
      for (const deviceId of devices) {
        if (out.length === max) return out;
        out.push({ userId, deviceId });
        devices.delete(deviceId);
      }
      this.#touched.delete(userId);
    }
    return out;
  }
}
