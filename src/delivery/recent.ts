/**
 * Messages this node stored or pushed recently, by §2.8 id and by
 * `<TYPE>.<tsid>` (the frame ACK's form), with the users whose inbox holds
 * them. An acknowledgement of such a message — nearly every ack, since acks
 * follow pushes within milliseconds — is resolved and authorised here
 * without a database read; older ones fall back to the store. C2G acks
 * matter most: a group of 1,000 sends 1,000 acks per message and has no retry
 * entry to find them by (its schedule is one push).
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
  readonly #byId = new Map<string, RecentMessage>();
  readonly #byTsid = new Map<string, RecentMessage>();
  readonly #sets = new WeakMap<readonly bigint[], ReadonlySet<bigint>>();
  /**
   * Held messages, oldest first from `#head`. Not the Map's own order: a Map
   * iterated from its start walks every entry deleted since its last rehash,
   * and evicting one message per remember that way cost 14 % of a node's CPU
   * in a C2C run once the bound was reached.
   */
  #order: RecentMessage[] = [];
  #head = 0;
  /** Sum of inbox sizes held: bounds memory for large groups, not only the count. */
  #weight = 0;

  constructor(private readonly maxWeight = 1 << 18) {}

  remember(m: RecentMessage): void {
    if (this.#byId.has(m.id)) return;
    this.#byId.set(m.id, m);
    this.#byTsid.set(tsidKey(m.id), m);
    this.#order.push(m);
    this.#weight += m.inbox.length + 1;
    while (this.#weight > this.maxWeight) {
      const old = this.#order[this.#head]!;
      this.#order[this.#head++] = undefined as never; // let it go now, not at the next compaction
      this.#byId.delete(old.id);
      const k = tsidKey(old.id);
      if (this.#byTsid.get(k) === old) this.#byTsid.delete(k);
      this.#weight -= old.inbox.length + 1;
    }
    // Drop the evicted prefix once it is half the array (amortised O(1) per message).
    if (this.#head > 1024 && this.#head * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#head);
      this.#head = 0;
    }
  }

  /** The message with this §2.8 id, if `userId` may acknowledge it. */
  byId(userId: bigint, id: string): RecentMessage | undefined {
    const m = this.#byId.get(id);
    return m && this.#holds(m.inbox, userId) ? m : undefined;
  }

  /** The message of direction `type` whose id has this tsid segment (frame ACK), if `userId` may acknowledge it. */
  byTsid(userId: bigint, type: string, tsid: string): RecentMessage | undefined {
    const m = this.#byTsid.get(`${type}.${tsid}`);
    return m && this.#holds(m.inbox, userId) ? m : undefined;
  }

  get size(): number {
    return this.#byId.size;
  }

  #holds(inbox: readonly bigint[], userId: bigint): boolean {
    if (inbox.length <= SCAN_MAX) return inbox.includes(userId);
    let set = this.#sets.get(inbox);
    if (!set) this.#sets.set(inbox, (set = new Set(inbox)));
    return set.has(userId);
  }
}

/** `<TYPE>.<tsid>` of a §2.8 id `<TYPE>.<tsid>.<ms>.<random>`. */
function tsidKey(id: string): string {
  return id.slice(0, id.indexOf(".", id.indexOf(".") + 1));
}
