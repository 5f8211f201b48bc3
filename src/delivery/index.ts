/**
 * createDelivery: the delivery engine, the notifier and their timers for one
 * node. src/node.ts wires `engine` into the transport and `notifier` into the
 * modules that emit §6 events.
 */
import type { Services } from "../services.ts";
import { configuredBots, type Bot } from "./bots.ts";
import { Engine } from "./engine.ts";
import { Floors } from "./floors.ts";
import { InboxReader, SETTLE_MS } from "./inbox.ts";
import { MarkLedger, MemoryMarkShare } from "./marks.ts";
import type { DeliveryEngine, Notifier, SessionRegistry, SocialGraph } from "./ports.ts";
import { DeliveryWriter, writeMarks } from "./writer.ts";

export interface DeliveryDeps {
  readonly sessions: SessionRegistry;
  readonly social: SocialGraph;
  /** Bot implementations beyond the built-in echo bot (ids must be in config `bots`). */
  readonly bots?: readonly Bot[];
}

export interface Delivery {
  readonly engine: DeliveryEngine;
  readonly notifier: Notifier;
  /** What the REST routes (src/http/routes/msg.ts) use. */
  readonly core: Engine;
  readonly inbox: InboxReader;
  readonly social: SocialGraph;
  /** Deletes messages older than the retention (returns how many), then compacts floors and marks. */
  prune(): Promise<number>;
  /**
   * Publishes this node's watermark and starts moving floors behind acknowledgements (src/delivery/floors.ts):
   * before the node takes traffic. Without it floors move only with compaction.
   */
  start(): Promise<void>;
  /** Waits for uplinks in progress and commits every queued batch. */
  flush(): Promise<void>;
  /** Stops the timers and flushes pending batches. */
  stop(): Promise<void>;
}

const DAY_MS = 86_400_000;

export function createDelivery(services: Services, deps: DeliveryDeps): Delivery {
  const { config, store, log, now } = services;
  const inbox = new InboxReader(store);
  const writer = new DeliveryWriter(
    store,
    config.deliveryBatchMax,
    { maxItems: config.deliveryQueueMax, maxBytes: config.deliveryQueueMaxBytes },
    config.deliveryWriteDepth,
    now,
  );
  let floors: Floors | undefined;
  const marks = new MarkLedger(
    services.marks ?? new MemoryMarkShare(),
    async (rows) => {
      await writeMarks(store, rows);
      floors?.touch(rows);
    },
    // Acks fold into one cursor row per device and group before the write, so a tick of a 1,000-member
    // group (thousands of acks) is still one row per device: the batch bound is on acks held, not rows.
    config.deliveryBatchMax * 16,
    (err) => log.warn("delivery: marks not shared or written yet", { err }),
    config.deliveryMarksMax,
    config.deliveryMarkTickMs,
  );
  const core = new Engine({
    sessions: deps.sessions,
    social: deps.social,
    bots: configuredBots(config.bots, deps.bots),
    writer,
    inbox,
    marks,
    ids: services.ids,
    log,
    now,
    retryTickMs: config.deliveryRetryTickMs,
    ...(services.bus && services.presence && !services.presence.alone
      ? { cluster: { bus: services.bus, presence: services.presence, nodeId: services.nodeId } }
      : {}),
  });
  core.wheel.start();
  const prune = async () => {
    const gone = await inbox.prune(now() - config.messageRetentionDays * DAY_MS);
    // Compaction never moves a floor past messages minted this recently (they may still be in a batch).
    await inbox.compact(now() - SETTLE_MS);
    await Floors.sweep(store, now());
    return gone;
  };
  const pruneTimer = setInterval(
    () => void prune().catch((err) => log.error("delivery: prune failed", { err })),
    config.deliveryPruneIntervalMs,
  );
  pruneTimer.unref?.();

  const flush = async () => {
    await core.settle();
    await writer.flush();
    await core.settle();
    await marks.flush();
  };
  let stopped: Promise<void> | undefined;
  return {
    engine: core,
    notifier: core,
    core,
    inbox,
    social: deps.social,
    prune,
    start: async () => {
      if (floors) return;
      const f = new Floors(store, inbox, () => writer.lowWater(services.ids.next()), now, log);
      await f.start();
      floors = f;
    },
    flush,
    stop: () =>
      (stopped ??= (async () => {
        clearInterval(pruneTimer);
        core.wheel.stop();
        core.stop();
        await flush();
        await floors?.stop();
      })()),
  };
}
