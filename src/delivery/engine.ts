/**
 * The delivery engine: validate at the edge, route against the social graph,
 * store first (group commit), acknowledge, push to every live device with the
 * §8 schedule, take acknowledgements into per-device marks.
 * docs/delivery.md follows one message through here.
 */
import type { Bus, BusEntry } from "../bus/bus.ts";
import { deliverLocally } from "../bus/local.ts";
import { encodeBusMessage } from "../bus/message.ts";
import type { Presence } from "../cluster/presence.ts";
import { targetsByNode } from "../cluster/route.ts";
import type { Logger } from "../log.ts";
import { CloseCode } from "../model/close-codes.ts";
import { idFloorForTime, type IdGenerator } from "../ids/tsid.ts";
import { stringifyJson } from "../protocol/json.ts";
import type { Bot } from "./bots.ts";
import { isRetired, OPEN_BATCH_MAX, type AckTarget, type DeviceOpen, type InboxReader } from "./inbox.ts";
import { StoreUnavailable } from "./group-commit.ts";
import type { MarkLedger } from "./marks.ts";
import { mintMessageId } from "./msg-id.ts";
import {
  Outbound,
  type ChatType,
  type ClientAck,
  type DeliveryEngine,
  type DeviceAddress,
  type ImMessage,
  type Notifier,
  type Session,
  type SessionRegistry,
  type SocialGraph,
} from "./ports.ts";
import { RecentMessages, type RecentMessage } from "./recent.ts";
import { RETRY_SCHEDULE, RetryWheel, type RetryEntry } from "./retry.ts";
import { route, routeNow, type Route, type Routed } from "./route.ts";
import { validateUplink } from "./validate.ts";
import { toRow } from "./wire.ts";
import type { DeliveryWriter, MarkRow, StoreItem, Stored } from "./writer.ts";
import { metrics } from "../metrics/index.ts";

export interface EngineDeps {
  readonly sessions: SessionRegistry;
  readonly social: SocialGraph;
  readonly bots: ReadonlyMap<bigint, Bot | undefined>;
  readonly writer: DeliveryWriter;
  readonly inbox: InboxReader;
  /** Acknowledgements: visible to every node at once, written to the database in batches. */
  readonly marks: MarkLedger;
  readonly ids: IdGenerator;
  readonly log: Logger;
  readonly now: () => number;
  readonly retryTickMs: number;
  /** Other nodes (docs/cluster.md): where devices are, and the bus to reach them. Absent: this node alone. */
  readonly cluster?: { readonly bus: Bus; readonly presence: Presence; readonly nodeId: number };
}

const EMPTY = "{}";

/** Users remembered for a `pull` after an outage of this node's Redis; beyond it, every device is asked. */
export const SKIPPED_MAX = 10_000;

/** A device check that failed (the store down) is asked again after this long, while its connection is open. */
export const CHECK_RETRY_MS = 1000;
/** How long an offline pull waits for another node's connect check to record the device's floor (Engine.pullFloor). */
export const FLOOR_WAIT_MS = 2000;
const FLOOR_POLL_MS = 20;

/** A connect waiting for its device check: the id minted at the connect (its floor if first seen), the device's earlier node. */
interface Connect {
  readonly session: Session;
  readonly fresh: bigint;
  readonly prev: number | undefined;
}

const sameDevice = (a: DeviceAddress, b: DeviceAddress | undefined) =>
  b !== undefined && a.userId === b.userId && a.deviceId === b.deviceId;

export class Engine implements DeliveryEngine, Notifier {
  readonly wheel: RetryWheel;
  /** Per connection: the last uplink still between validation and the store queue (keeps its order). */
  readonly #tails = new Map<number, Promise<void>>();
  /** Background work (pushes after commit, presence, bots) that stop() waits for. */
  readonly #inflight = new Set<Promise<unknown>>();
  /** Connections of devices retired in user_device (status 0/-1): never pushed to. */
  readonly #retired = new Set<number>();
  /**
   * Users announced online from this node: by the first connection whose
   * device check answered (not the first to open: connects checked together
   * would each see the other), until their last connection closes.
   */
  readonly #online = new Set<bigint>();
  /** Open sessions on this node (catch-up after a Redis outage). */
  readonly #open = new Map<number, Session>();
  /** Connects waiting for their device check (#checkDevice), and whether a check is running. */
  #connects: Connect[] = [];
  #checking = false;
  /** Connects whose check failed, asked again together after CHECK_RETRY_MS. */
  #recheck: Connect[] = [];
  #recheckTimer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  /** Messages pushed lately: acks resolve here without a database read. */
  readonly recent = new RecentMessages();
  /** Recipients whose devices on other nodes this node could not reach (presence or bus down): they pull once Redis is back. */
  #skipped = new Set<bigint>();
  /** More than SKIPPED_MAX skipped: the pull goes to every device. */
  #skippedAll = false;

  constructor(private readonly d: EngineDeps) {
    this.wheel = new RetryWheel((e) => this.#attempt(e), d.now, d.retryTickMs, (e) => this.#unanswered(e));
  }

  // ---- transport side ------------------------------------------------------

  onOpen(session: Session): void {
    this.#open.set(session.connId, session);
    const cluster = this.d.cluster;
    if (cluster) this.#track(this.#openedInCluster(session, cluster));
    else this.#checkDevice(session, undefined);
  }

  onClose(session: Session): void {
    this.#open.delete(session.connId);
    this.#retired.delete(session.connId);
    const current = this.d.sessions.session(session.userId, session.deviceId);
    // A takeover's new connection keeps the device's retries; a real disconnect drops them.
    if (!current || current.connId === session.connId) {
      this.wheel.cancelDevice(session.userId, session.deviceId);
      const cluster = this.d.cluster;
      if (cluster) this.#track(cluster.presence.remove(session.userId, session.deviceId));
    }
    if (this.#onlyConnection(session) && this.#online.delete(session.userId)) this.#presenceOf(session.userId, "offline");
  }

  onMessage(session: Session, raw: Record<string, unknown>): void {
    const v = validateUplink(raw, session.userId, this.d.now());
    if (!v.ok) {
      this.tell(session, "invalid_message", { content: v.reason }, v.inReplyTo);
      return;
    }
    const msg = v.msg;
    const prev = this.#tails.get(session.connId);
    // Uplinks of one connection enter the store queue in arrival order. With none of them still being checked,
    // a check the social cache answers at once stores this one now: no promise between the socket and the queue.
    if (prev === undefined) {
      const now = routeNow(msg, this.d.social, this.d.bots);
      if (now !== undefined) return this.#routed(session, msg, now);
    }
    // Otherwise the checks of one connection run concurrently but enter the queue in order, after earlier uplinks.
    const check = route(msg, this.d.social, this.d.bots);
    check.catch(() => {}); // handled where it is awaited (after earlier uplinks of the connection)
    const step = (prev ?? Promise.resolve()).then(async () => {
      let routed;
      try {
        routed = await check;
      } catch (err) {
        // The social graph could not be read (its store is down): answered like a store refusal.
        this.d.log.warn("delivery: routing failed", { err, id: msg.id });
        return this.#storeDown(session, msg);
      }
      this.#routed(session, msg, routed);
    });
    const tail = step.catch((err) => this.d.log.error("delivery: uplink failed", { err, id: msg.id }));
    this.#tails.set(session.connId, tail);
    void tail.then(() => {
      if (this.#tails.get(session.connId) === tail) this.#tails.delete(session.connId);
    });
  }

  #storeDown(session: Session, msg: ImMessage): void {
    this.tell(session, "invalid_message", { reason: "store_unavailable", content: "the message store is unavailable; send it again later" }, msg.id);
  }

  /** A checked uplink: refused, or stored (queued), then acknowledged and pushed once its batch committed. */
  #routed(session: Session, msg: ImMessage & { type: Exclude<ChatType, "S2C"> }, routed: Routed): void {
    if (!routed.ok) {
      this.tell(session, routed.action, { content: routed.content }, msg.id);
      return;
    }
    const serverId = this.d.ids.next();
    const group = msg.type === "C2G";
    // A group message is one timeline entry; the sending device's cursor takes it once its number is known.
    // A C2C message is its row alone: its two users' devices find it by the row's sides, the sending device by
    // the row's from_device (docs/delivery.md "C2C").
    const bare = group || msg.type === "C2C";
    const item: StoreItem = {
      row: toRow(msg, serverId, session.deviceId),
      inbox: bare ? NONE : routed.route.inbox,
      marks: bare ? NONE : [{ userId: session.userId, deviceId: session.deviceId }],
    };
    this.d.writer.messages.enqueue(
      item,
      (s) => {
        try {
          this.#stored(session, msg, routed.route, serverId, s);
        } catch (err) {
          this.d.log.error("delivery: background step failed", { err, id: msg.id });
        }
      },
      // Not stored (queue full, store failing or the batch failed): the sender is told, and may send it again.
      (err: unknown) => {
        if (!(err instanceof StoreUnavailable)) this.d.log.warn("delivery: message not stored", { err, id: msg.id });
        this.#storeDown(session, msg);
      },
    );
  }

  /** An uplink's batch committed: SERVER_ACK, then (unless it was a resend) the pushes and the after-steps. */
  #stored(session: Session, msg: ImMessage & { type: Exclude<ChatType, "S2C"> }, route: Route, serverId: bigint, s: Stored): void {
    if (s.taken) {
      this.tell(session, "invalid_message", { content: "id already used by another message of this conversation" }, msg.id);
      return;
    }
    session.send(new Outbound(serverAck(msg, s.serverTs)));
    if (s.duplicate) return;
    metrics.message(msg.type);
    if (s.seq !== undefined) this.#record([{ userId: session.userId, deviceId: session.deviceId, messageId: serverId, conv: msg.to, seq: s.seq }]);
    this.#push(msg, route.inbox, session, serverId, s.seq);
    if (msg.type === "C2G") this.#track(this.d.social.afterGroupMessage(msg, msg.to, serverId));
    else if (route.bot) this.#track(route.bot.handle(msg, (p) => this.#botReply(route.bot!.id, msg.from!, p)));
  }

  onAck(session: Session, ack: ClientAck): void {
    if (ack.did !== session.deviceId) {
      this.tell(session, "permission_denied", { content: "did is not this connection's device" }, ack.msgId);
      return;
    }
    this.#acked(session, ack);
  }

  // ---- Notifier -------------------------------------------------------------

  async notify(
    userIds: Iterable<bigint>,
    action: string,
    payload: Record<string, unknown>,
    opts: { readonly exceptDevice?: DeviceAddress } = {},
  ): Promise<void> {
    const payloadJson = stringifyJson(payload);
    const jobs: Promise<void>[] = [];
    for (const userId of new Set(userIds)) {
      const { msg, serverId } = this.#minted("S2C", null, userId, payload, payloadJson, { action });
      const except = opts.exceptDevice;
      const item: StoreItem = {
        row: toRow(msg, serverId),
        inbox: [userId],
        marks: except && except.userId === userId ? [except] : [],
      };
      jobs.push(
        this.d.writer.messages.add(item).then(() => {
          metrics.message("S2C");
          this.#push(msg, [userId], except, serverId);
        }),
      );
    }
    await Promise.all(jobs);
  }

  tell(session: Session, action: string, payload: Record<string, unknown>, inReplyTo?: string): void {
    const extra = inReplyTo !== undefined ? { action, in_reply_to: inReplyTo } : { action };
    session.send(new Outbound(this.#minted("S2C", null, session.userId, payload, stringifyJson(payload), extra).msg));
  }

  // ---- acknowledgements (socket and REST) -----------------------------------

  /**
   * Marks messages (§2.8 ids) delivered to one device and cancels their
   * retries. Returns the ids found in the user's inbox.
   */
  async markDelivered(userId: bigint, deviceId: string, ids: readonly string[]): Promise<Set<string>> {
    const found = new Map<string, Pick<AckTarget, "serverId" | "chatType" | "conv" | "seq">>();
    const unknown: string[] = [];
    for (const id of ids) {
      const hit = this.recent.byId(userId, id);
      if (hit) found.set(id, hit);
      else unknown.push(id);
    }
    if (unknown.length) for (const [id, m] of await this.d.inbox.resolve(userId, unknown)) found.set(id, m);
    for (const id of found.keys()) {
      const entry = this.wheel.find(userId, deviceId, id);
      if (entry) this.wheel.cancel(entry);
    }
    await this.d.marks.record([...found.values()].map((m) => markOf(userId, deviceId, m)));
    if (this.d.cluster && found.size) this.#track(this.#forwardAcks(userId, deviceId, [...found]));
    return new Set(found.keys());
  }

  /**
   * The floor an offline pull records for a device seen for the first time:
   * an id minted now, but no later than the device's connection's own check
   * records (its floor minted at the connect), which may not have committed
   * yet. Were the pull's later floor recorded first, messages pushed to the
   * connection meanwhile would never be pending for the device.
   * - Connected to this node: the floor of the connection's open.
   * - Connected to another node (presence) and its floor not settled: wait
   *   for that node's check, up to FLOOR_WAIT_MS.
   */
  async pullFloor(userId: bigint, deviceId: string): Promise<bigint> {
    const fresh = this.d.ids.next();
    const open = this.d.sessions.session(userId, deviceId);
    if (open) {
      const atOpen = idFloorForTime(open.openedAt);
      return atOpen < fresh ? atOpen : fresh;
    }
    const cluster = this.d.cluster;
    if (!cluster || (await this.d.inbox.floorSettled(userId, deviceId))) return fresh;
    let elsewhere: boolean;
    try {
      const at = (await cluster.presence.lookup([userId])).get(userId) ?? [];
      elsewhere = at.some((e) => e.deviceId === deviceId && e.nodeId !== cluster.nodeId);
    } catch {
      return fresh; // presence unreachable: the pull goes on (as every cross-node step does without Redis)
    }
    for (let waited = 0; elsewhere && waited < FLOOR_WAIT_MS; waited += FLOOR_POLL_MS) {
      await Bun.sleep(FLOOR_POLL_MS);
      if (await this.d.inbox.floorSettled(userId, deviceId)) break;
    }
    return fresh;
  }

  /** Marks a device made that may not be committed yet: every pending read subtracts them. */
  unconfirmed(userId: bigint, deviceId: string): Promise<readonly MarkRow[]> {
    return this.d.marks.unconfirmed(userId, deviceId);
  }

  /**
   * A REST ack names a device that may be connected to another node, which
   * runs its retries: that node gets one `ack` entry per message. Presence
   * unreachable: the retries there run out on their own (the mark is stored).
   */
  async #forwardAcks(userId: bigint, deviceId: string, found: [string, { chatType: string }][]): Promise<void> {
    const cluster = this.d.cluster!;
    const at = (await cluster.presence.lookup([userId])).get(userId)?.find((e) => e.deviceId === deviceId);
    if (!at || at.nodeId === cluster.nodeId) return;
    for (const [msgId, m] of found) cluster.bus.send(at.nodeId, { kind: "ack", userId, deviceId, msgId, type: m.chatType as ChatType });
  }

  /**
   * After this node lost Redis, deliver entries addressed to its devices may
   * never have been sent (the sender's presence lookup failed): every local
   * device with pending messages is told to pull, as on connect. With
   * `userIds` (a `pull` entry): only those users' devices.
   */
  async catchUp(userIds?: readonly bigint[]): Promise<void> {
    const sessions = userIds ? userIds.flatMap((u) => this.d.sessions.sessionsOf(u)) : [...this.#open.values()];
    for (const s of sessions) {
      if (this.#retired.has(s.connId)) continue;
      if (await this.d.inbox.hasPending(s.userId, s.deviceId, await this.unconfirmed(s.userId, s.deviceId))) this.tell(s, "pull_offline_msg", {});
    }
  }

  /**
   * After this node's Redis connection came back: the users whose devices on
   * other nodes were skipped meanwhile are sent to every other live node in a
   * `pull` entry (no list when there were too many: every device pulls).
   * Fails (and keeps the list) if Redis is gone again.
   */
  async pullElsewhere(): Promise<void> {
    const cluster = this.d.cluster;
    if (!cluster || (!this.#skipped.size && !this.#skippedAll)) return;
    const nodes = await cluster.presence.nodes();
    const entry = this.#skippedAll ? ({ kind: "pull" } as const) : ({ kind: "pull", userIds: [...this.#skipped] } as const);
    this.#skipped = new Set();
    this.#skippedAll = false;
    for (const n of nodes) if (n !== cluster.nodeId) cluster.bus.send(n, entry);
  }

  #skip(users: readonly bigint[]): void {
    if (this.#skippedAll) return;
    for (const u of users) this.#skipped.add(u);
    if (this.#skipped.size > SKIPPED_MAX) {
      this.#skipped = new Set();
      this.#skippedAll = true;
    }
  }

  /** Message batches committed so far (metrics, tests). */
  writerBatches(): number {
    return this.d.writer.messages.batches;
  }

  /** Waits for background work (pushes after commit, bot replies, presence) and every uplink in progress. */
  async settle(): Promise<void> {
    while (this.#tails.size || this.#inflight.size) await Promise.allSettled([...this.#tails.values(), ...this.#inflight]);
  }

  // ---- internals -------------------------------------------------------------

  #track(p: Promise<unknown>): void {
    const t = p.catch((err) => this.d.log.error("delivery: background step failed", { err }));
    this.#inflight.add(t);
    void t.finally(() => this.#inflight.delete(t));
  }

  /**
   * A connection opened in a cluster: presence first (so a sender on another
   * node that stores after the device check below finds this device and
   * pushes), then the check.
   */
  async #openedInCluster(session: Session, cluster: NonNullable<EngineDeps["cluster"]>): Promise<void> {
    const prev = await cluster.presence.add(session.userId, session.deviceId).catch(() => undefined);
    this.#checkDevice(session, prev);
  }

  /**
   * Queues a connect's device check: one statement for status, floor and
   * pending (InboxReader.openDevices) for every connect of a turn, one
   * statement at a time, those arriving meanwhile in the next. A connect costs
   * an entry here, no promise of its own (a reconnect storm is thousands).
   */
  #checkDevice(session: Session, prev: number | undefined): void {
    this.#queueCheck({ session, fresh: this.d.ids.next(), prev });
  }

  #queueCheck(connect: Connect): void {
    this.#connects.push(connect);
    if (this.#checking) return;
    this.#checking = true;
    this.#track(this.#checkConnects());
  }

  async #checkConnects(): Promise<void> {
    try {
      await new Promise<void>((r) => setImmediate(r)); // the connects of this turn share the first statement
      while (this.#connects.length) {
        const batch = this.#connects.splice(0, OPEN_BATCH_MAX);
        let devs: readonly DeviceOpen[];
        try {
          devs = await this.d.inbox.openDevices(batch.map((c) => ({ userId: c.session.userId, deviceId: c.session.deviceId, fresh: c.fresh })));
        } catch (err) {
          this.d.log.error("delivery: device check failed, asked again", { err, devices: batch.length, retryMs: CHECK_RETRY_MS });
          this.#checkLater(batch);
          continue;
        }
        for (let i = 0; i < batch.length; i++) {
          try {
            this.#deviceChecked(batch[i]!, devs[i]!);
          } catch (err) {
            this.d.log.error("delivery: background step failed", { err });
          }
        }
      }
    } finally {
      this.#checking = false;
    }
  }

  /**
   * A failed check (the store down) is asked again, with the floor minted at
   * the connect, for the connections still open: else a device that connected
   * during an outage would never hear of its pending messages, nor its friends
   * of it, until it reconnected.
   */
  #checkLater(batch: readonly Connect[]): void {
    if (this.#stopped) return;
    for (const c of batch) this.#recheck.push(c);
    if (this.#recheckTimer) return;
    this.#recheckTimer = setTimeout(() => {
      this.#recheckTimer = undefined;
      const again = this.#recheck;
      this.#recheck = [];
      for (const c of again) if (this.#open.get(c.session.connId) === c.session) this.#queueCheck(c);
    }, CHECK_RETRY_MS);
    this.#recheckTimer.unref?.();
  }

  /** Stops asking failed device checks again (the node is stopping). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#recheckTimer);
    this.#recheckTimer = undefined;
    this.#recheck = [];
  }

  /**
   * A connect's device check answered: a retired device is taken out of
   * presence again (no kick); else pending and presence. Nothing for a
   * connection closed meanwhile: an online after its close would leave the
   * friends seeing a user who is gone.
   */
  #deviceChecked({ session, prev }: Connect, dev: DeviceOpen): void {
    if (this.#open.get(session.connId) !== session) return;
    const { userId, deviceId } = session;
    const cluster = this.d.cluster;
    if (isRetired(dev.status)) {
      this.#retired.add(session.connId);
      if (cluster) this.#track(cluster.presence.remove(userId, deviceId).catch(() => undefined));
      return;
    }
    // Takeover across nodes: the node that held this device closes its connection.
    if (cluster && prev !== undefined && prev !== cluster.nodeId) {
      cluster.bus.send(prev, { kind: "kick", userId, deviceId, action: "logged_another_device", at: this.d.now() });
    }
    if (dev.pending) this.#track(this.#pendingOnOpen(session));
    if (!this.#online.has(userId)) {
      this.#online.add(userId);
      this.#presenceOf(userId, "online");
    }
  }

  /** The statement counts committed marks only: acks not yet committed (docs/delivery.md "Marks") are checked apart. */
  async #pendingOnOpen(session: Session): Promise<void> {
    try {
      const acked = await this.unconfirmed(session.userId, session.deviceId);
      if (acked.length && !(await this.d.inbox.hasPending(session.userId, session.deviceId, acked))) return;
    } catch (err) {
      // The statement found messages; whether acks not yet committed cover them all is unknown. Told anyway:
      // a pull that finds nothing costs one request, a notice left out leaves them waiting until a reconnect.
      this.d.log.warn("delivery: pending check on connect failed, told to pull", { err });
    }
    this.tell(session, "pull_offline_msg", {});
  }

  /** True when `session` is the user's only connection here (the last to close). */
  #onlyConnection(session: Session): boolean {
    return this.d.sessions.sessionsOf(session.userId).every((s) => s.connId === session.connId);
  }

  /**
   * Presence goes the S2C way (issue 5): stored per friend, retried, pulled
   * offline; a client orders online/offline by the notice ids.
   */
  #presenceOf(userId: bigint, action: "online" | "offline"): void {
    // The cached friend list first: an empty one (most connects of a storm) costs no promise.
    const friends = this.d.social.friendsOfNow?.(userId);
    if (friends === undefined) this.#track(this.d.social.friendsOf(userId).then((f) => this.#tellFriends(f, userId, action)));
    else this.#tellFriends(friends, userId, action);
  }

  #tellFriends(friends: readonly bigint[], userId: bigint, action: "online" | "offline"): void {
    if (friends.length) this.#track(this.notify(friends, action, { user_id: userId, uid: userId }));
  }

  /**
   * First attempt to every live device of `users` except `except` (the
   * sending device), one Outbound for all; later attempts go on the wheel.
   */
  #push(msg: ImMessage, users: readonly bigint[], except: DeviceAddress | undefined, serverId: bigint, seq?: bigint): void {
    const out = new Outbound(msg);
    const schedule = RETRY_SCHEDULE[msg.type as ChatType];
    let tracked = false;
    for (const userId of users) {
      for (const s of this.d.sessions.sessionsOf(userId)) {
        if (sameDevice(s, except) || this.#retired.has(s.connId)) continue;
        if (s.send(out) === "closed") continue;
        if (this.wheel.track({ userId, deviceId: s.deviceId, out, serverId, schedule, inbox: users })) tracked = true;
      }
    }
    // Acks of a push with retry entries find them; the message joins the recent ones only when no entry answers for
    // it (C2G's single push, no device reached here) or once its entries end unanswered (#unanswered). Holding
    // every C2C message there kept up to ~87,000 of them alive (its bound) and made the collector's pauses 1.5–2
    // times as long: the half-load tail (bench/FINDINGS.md, 2026-11-28 fourth).
    if (!tracked) {
      this.recent.remember(recentOf(msg, serverId, users, seq));
    }
    if (this.d.cluster) this.#track(this.#pushRemote(msg, users, except, serverId, seq));
  }

  /**
   * Devices on other nodes: one deliver entry per node, the message encoded
   * once. The receiving node pushes and runs those devices' retries (their acks
   * arrive there). Presence unreachable: remote devices count as offline.
   */
  async #pushRemote(msg: ImMessage, users: readonly bigint[], except: DeviceAddress | undefined, serverId: bigint, seq?: bigint): Promise<void> {
    const cluster = this.d.cluster!;
    let found;
    try {
      found = await cluster.presence.lookup(users);
    } catch (err) {
      this.d.log.warn("delivery: presence lookup failed; remote devices will pull", { err });
      this.#skip(users);
      return;
    }
    let bytes: Uint8Array | undefined;
    for (const [node, targets] of targetsByNode(found, except)) {
      if (node === cluster.nodeId) continue;
      bytes ??= encodeBusMessage(msg, serverId, seq);
      cluster.bus.send(node, { kind: "deliver", targets, message: bytes });
      // Buffered while Redis is away, and the buffer may drop it: those devices pull too.
      if (!cluster.bus.ready()) this.#skip(targets.map((t) => t.userId));
    }
  }

  /** Entries other nodes sent this one (bus handler). */
  onBus(entry: BusEntry, _from: number): void {
    switch (entry.kind) {
      case "deliver": {
        const { out, serverId, seq, sent } = deliverLocally(entry, this.d.sessions);
        const schedule = RETRY_SCHEDULE[out.msg.type as ChatType] ?? RETRY_SCHEDULE.S2C;
        const inbox = serverId !== undefined ? entry.targets.map((t) => t.userId) : undefined;
        let tracked = false;
        for (const [s, outcome] of sent) {
          if (outcome === "closed" || this.#retired.has(s.connId)) continue;
          if (this.wheel.track({ userId: s.userId, deviceId: s.deviceId, out, schedule, ...(serverId !== undefined ? { serverId, inbox } : {}) })) tracked = true;
        }
        // As for a local push (#push): held among the recent ones only when no retry entry answers for it.
        if (serverId !== undefined && !tracked) this.recent.remember(recentOf(out.msg, serverId, inbox!, seq));
        return;
      }
      case "kick":
        for (const s of this.d.sessions.sessionsOf(entry.userId)) {
          // A session opened after the kick was decided is the newer connection (or a later one): left open.
          if (s.deviceId !== entry.deviceId || s.openedAt >= entry.at) continue;
          this.tell(s, entry.action, { content: "signed in on this device elsewhere", device_id: entry.deviceId });
          s.close(CloseCode.Replaced, entry.action);
        }
        return;
      case "ack": {
        const e = this.wheel.find(entry.userId, entry.deviceId, entry.msgId);
        if (e) this.wheel.cancel(e);
        return;
      }
      case "pull":
        this.#track(this.catchUp(entry.userIds));
        return;
      case "invalidate":
      case "sessions":
        return; // social caches and session cuts: handled by the node's bus handler (src/node.ts)
    }
  }

  /**
   * A push's retry entry ended unacknowledged (last attempt made, its device gone): the ack may still come, after
   * the last push or a reconnect, so the message joins the recent ones (a timeline message, with its number, never
   * has an entry: one push).
   */
  #unanswered(e: RetryEntry): void {
    if (e.serverId === undefined || e.inbox === undefined) return;
    this.recent.remember(recentOf(e.out.msg, e.serverId, e.inbox));
  }

  #attempt(e: RetryEntry): boolean {
    const s = this.d.sessions.session(e.userId, e.deviceId);
    return s !== undefined && !this.#retired.has(s.connId) && s.send(e.out) !== "closed";
  }

  /**
   * An ack resolved from memory (the retry entry or the messages pushed lately)
   * with a mark share in process memory runs synchronously: no promise, no
   * database read. That is nearly every ack, and a 1,000-member group sends
   * 1,000 per message.
   */
  #acked(session: Session, ack: ClientAck): void {
    metrics.acks.inc();
    const { userId, deviceId } = session;
    let id = ack.msgId;
    let target: Target | undefined;
    const entry = ack.tsidOnly
      ? this.wheel.findByTsid(userId, deviceId, ack.type, ack.msgId)
      : this.wheel.find(userId, deviceId, ack.msgId);
    if (entry) {
      this.wheel.cancel(entry);
      id = entry.out.msg.id;
      if (entry.serverId !== undefined) target = { serverId: entry.serverId };
    }
    const byTsid = ack.tsidOnly === true && !entry;
    if (target === undefined) {
      const hit = byTsid ? this.recent.byTsid(userId, ack.type, ack.msgId) : this.recent.byId(userId, id);
      if (hit) [id, target] = [hit.id, hit];
    }
    if (target === undefined) {
      this.#track(this.#ackedFromStore(session, ack, id, byTsid));
      return;
    }
    this.#confirm(session, id, target);
  }

  /** An ack of a message this node no longer remembers: resolved from the store. */
  async #ackedFromStore(session: Session, ack: ClientAck, id: string, byTsid: boolean): Promise<void> {
    const { userId, deviceId } = session;
    const hit = byTsid
      ? await this.d.inbox.resolveTsid(userId, deviceId, ack.type, ack.msgId)
      : (await this.d.inbox.resolve(userId, [id])).get(id);
    if (hit === undefined) {
      this.tell(session, "invalid_message", { content: `unknown message ${ack.msgId}` }, ack.msgId);
      return;
    }
    this.#confirm(session, hit.clientId, hit);
  }

  /** Records the mark and answers CLIENT_ACK_CONFIRM once every node can see it (docs/delivery.md "Marks"). */
  #confirm(session: Session, id: string, target: Target): void {
    const shared = this.d.marks.record([markOf(session.userId, session.deviceId, target)]);
    if (shared) this.#track(shared.then(() => this.#sendConfirm(session, id)));
    else this.#sendConfirm(session, id);
  }

  /** Marks nobody waits for (the sending device's own group message): a failure is logged. */
  #record(marks: readonly MarkRow[]): void {
    const shared = this.d.marks.record(marks);
    if (shared) this.#track(shared);
  }

  #sendConfirm(session: Session, id: string): void {
    session.send(
      new Outbound({
        id,
        type: "CLIENT_ACK_CONFIRM",
        from: null,
        to: session.userId,
        payload: {},
        payloadJson: EMPTY,
        action: "CLIENT_ACK_CONFIRM",
        server_ts: this.d.now(),
        in_reply_to: id,
      }),
    );
  }

  /** A server-originated message with a fresh server id in its §2.8 id (S2C: `msg_type` reserved, empty). */
  #minted(
    type: ChatType,
    from: bigint | null,
    to: bigint,
    payload: Record<string, unknown>,
    payloadJson: string,
    extra: Partial<ImMessage>,
  ): { msg: ImMessage; serverId: bigint } {
    const now = this.d.now();
    const serverId = this.d.ids.next();
    const msg: ImMessage = { id: mintMessageId(type, serverId, now), type, from, to, payload, payloadJson, msg_type: "", server_ts: now, ...extra };
    return { msg, serverId };
  }

  /** A bot's answer: a C2S message from the bot to the user, stored, pushed with the C2S schedule. */
  async #botReply(botId: bigint, userId: bigint, payload: Record<string, unknown>): Promise<void> {
    const { msg, serverId } = this.#minted("C2S", botId, userId, payload, stringifyJson(payload), { msg_type: "text" });
    await this.d.writer.messages.add({ row: toRow(msg, serverId), inbox: [userId], marks: [] });
    this.#push(msg, [userId], undefined, serverId);
  }
}

/** No inbox rows or marks (C2C, C2G): one frozen array for every such message, not two new ones each. */
const NONE: readonly never[] = Object.freeze([]);

/** A pushed message as the recent ones hold it (a timeline message with its group and number). */
const recentOf = (m: ImMessage, serverId: bigint, inbox: readonly bigint[], seq?: bigint): RecentMessage =>
  seq !== undefined ? { id: m.id, serverId, chatType: m.type, inbox, conv: m.to, seq } : { id: m.id, serverId, chatType: m.type, inbox };

/** What an acknowledgement resolved to: an inbox message, or (with `conv`, `seq`) a timeline entry. */
type Target = Pick<AckTarget, "serverId" | "conv" | "seq">;

const markOf = (userId: bigint, deviceId: string, t: Target): MarkRow =>
  t.seq !== undefined ? { userId, deviceId, messageId: t.serverId, conv: t.conv!, seq: t.seq } : { userId, deviceId, messageId: t.serverId };

/** `<TYPE>_SERVER_ACK`: the same message id, empty payload, in_reply_to the id (§6). */
function serverAck(msg: ImMessage, serverTs: number): ImMessage {
  return {
    id: msg.id,
    type: `${msg.type}_SERVER_ACK`,
    from: msg.from,
    to: msg.to,
    payload: {},
    payloadJson: EMPTY,
    msg_type: msg.msg_type, // undefined is absent to every encoder (no spread per acknowledgement)
    server_ts: serverTs,
    in_reply_to: msg.id,
  };
}
