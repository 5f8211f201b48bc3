/**
 * Messages pushed lately that no retry entry answers for, by §2.8 id and by
 * `<TYPE>.<tsid>` (the frame ACK's form), with the users whose inbox holds
 * them: group messages (one push, no entry; a group of 1,000 sends 1,000 acks
 * per message), messages that reached no device here, and messages whose
 * entries ended unacknowledged (last attempt made, device disconnected: the
 * ack may follow the last push or a reconnect). An ack of such a message is
 * resolved and authorised here without a database read; older ones fall back
 * to the store. A push with retry entries is acknowledged through them
 * (src/delivery/retry.ts) and is held here only if they end unanswered.
 */

export interface RecentMessage {
  readonly id: string;
  readonly serverId: bigint;
  readonly chatType: string;
  /** Users whose inbox has it, or the group's members (C2G): only they may acknowledge it. */
  readonly inbox: readonly bigint[];
  /** C2G: the group and the message's number in its timeline (an ack moves the device's cursor). */
  readonly conv?: bigint;
  readonly seq?: bigint;
}

/** Above this many users a membership test builds a Set once instead of scanning. */
const SCAN_MAX = 16;

export class RecentMessages {
  /**
   * By `<TYPE>.<tsid>` only: a §2.8 id lookup takes its key from the id and
   * checks the whole id on the entry. One Map write and one delete per message
   * instead of two of each (a second Map by full id cost as much again).
   * Two held messages with one key (a tsid is unique per conversation, not
   * per node): the later one is found, the earlier falls back to the store.
   */
  readonly #byKey = new Map<string, Held>();
  readonly #sets = new WeakMap<readonly bigint[], ReadonlySet<bigint>>();
  /**
   * Held messages, oldest first from `#head`. Not the Map's own order: a Map
   * iterated from its start walks every entry deleted since its last rehash,
   * and evicting one message per remember that way cost 14 % of a node's CPU
   * in a C2C run once the bound was reached.
   */
  #order: Held[] = [];
  #head = 0;
  /** Sum of inbox sizes held: bounds memory for large groups, not only the count. */
  #weight = 0;

  constructor(private readonly maxWeight = 1 << 18) {}

  remember(m: RecentMessage): void {
    const key = tsidKey(m.id);
    const held = this.#byKey.get(key);
    if (held?.m.id === m.id) return;
    const h: Held = { m, key };
    this.#byKey.set(key, h);
    this.#order.push(h);
    this.#weight += m.inbox.length + 1;
    while (this.#weight > this.maxWeight) {
      const old = this.#order[this.#head]!;
      this.#order[this.#head++] = undefined as never; // let it go now, not at the next compaction
      if (this.#byKey.get(old.key) === old) this.#byKey.delete(old.key);
      this.#weight -= old.m.inbox.length + 1;
    }
    // Drop the evicted prefix once it is half the array (amortised O(1) per message).
    if (this.#head > 1024 && this.#head * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#head);
      this.#head = 0;
    }
  }

  /** The message with this §2.8 id, if `userId` may acknowledge it. */
  byId(userId: bigint, id: string): RecentMessage | undefined {
    const m = this.#byKey.get(tsidKey(id))?.m;
    return m && m.id === id && this.#holds(m.inbox, userId) ? m : undefined;
  }

  /** The message of direction `type` whose id has this tsid segment (frame ACK), if `userId` may acknowledge it. */
  byTsid(userId: bigint, type: string, tsid: string): RecentMessage | undefined {
    const m = this.#byKey.get(`${type}.${tsid}`)?.m;
    return m && this.#holds(m.inbox, userId) ? m : undefined;
  }

  /** Messages held (by id; one shadowed by a later one with the same key still counts until evicted). */
  get size(): number {
    return this.#order.length - this.#head;
  }

  #holds(inbox: readonly bigint[], userId: bigint): boolean {
    if (inbox.length <= SCAN_MAX) return inbox.includes(userId);
    let set = this.#sets.get(inbox);
    if (!set) this.#sets.set(inbox, (set = new Set(inbox)));
    return set.has(userId);
  }
}

/** A held message with its key (computed once: the eviction deletes by the same string). */
interface Held {
  readonly m: RecentMessage;
  readonly key: string;
}

/** `<TYPE>.<tsid>` of a §2.8 id `<TYPE>.<tsid>.<ms>.<random>`. */
function tsidKey(id: string): string {
  return id.slice(0, id.indexOf(".", id.indexOf(".") + 1));
}
