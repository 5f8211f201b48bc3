/**
 * In-test stand-ins for the two ports delivery consumes (the real transport
 * and social graph arrive at merge): a SessionRegistry whose sessions record
 * what is sent, and a SocialGraph of friend pairs, denylists and groups.
 * Plus `deliveryOn(store)`: the real engine over a real store with a fake clock.
 */
import { testConfig, type Config } from "../../src/config/index.ts";
import { createDelivery, type Delivery } from "../../src/delivery/index.ts";
import type { E2eeMeta, Outbound, SendOutcome, Session, SessionRegistry, SocialGraph, ImMessage } from "../../src/delivery/ports.ts";
import type { Store } from "../../src/db/store.ts";
import type { MarkShare } from "../../src/delivery/marks.ts";
import { fail, ok, type Result } from "../../src/domain/errors.ts";
import { IdGenerator } from "../../src/ids/tsid.ts";
import { openSpans } from "../../src/delivery/membership.ts";
import type { InboxReader } from "../../src/delivery/inbox.ts";
import { createLogger } from "../../src/log.ts";
import type { Services } from "../../src/services.ts";

let connIds = 0;

export class TestSession implements Session {
  readonly connId = ++connIds;
  readonly deviceType = "web";
  readonly openedAt = Date.now();
  readonly sent: Outbound[] = [];
  closed = false;
  /** Called on every send, before it returns (e.g. to probe the database at that moment). */
  onSend?: (out: Outbound) => void;
  constructor(readonly userId: bigint, readonly deviceId: string) {}
  send(out: Outbound): SendOutcome {
    if (this.closed) return "closed";
    this.sent.push(out);
    this.onSend?.(out);
    return "sent";
  }
  close(): void {
    this.closed = true;
  }
  /** Messages sent so far, optionally only those matching type/action. */
  msgs(filter: { type?: string; action?: string } = {}): ImMessage[] {
    return this.sent
      .map((o) => o.msg)
      .filter((m) => (filter.type === undefined || m.type === filter.type) && (filter.action === undefined || m.action === filter.action));
  }
  clear(): void {
    this.sent.length = 0;
  }
}

export class TestSessions implements SessionRegistry {
  readonly #byUser = new Map<bigint, TestSession[]>();
  constructor(public delivery?: Delivery) {}
  sessionsOf(userId: bigint): readonly Session[] {
    return this.#byUser.get(userId) ?? [];
  }
  session(userId: bigint, deviceId: string): Session | undefined {
    return this.#byUser.get(userId)?.find((s) => s.deviceId === deviceId);
  }
  /** Registers a session and tells the engine (registered first, like the transport). */
  open(userId: bigint, deviceId: string): TestSession {
    const s = new TestSession(userId, deviceId);
    const list = (this.#byUser.get(userId) ?? []).filter((o) => o.deviceId !== deviceId);
    this.#byUser.set(userId, [...list, s]);
    this.delivery?.engine.onOpen(s);
    return s;
  }
  close(s: TestSession): void {
    s.closed = true;
    this.#byUser.set(s.userId, (this.#byUser.get(s.userId) ?? []).filter((o) => o !== s));
    this.delivery?.engine.onClose(s);
  }
}

export class TestSocial implements SocialGraph {
  readonly friends = new Set<string>();
  readonly denied = new Set<string>();
  readonly groups = new Map<bigint, bigint[]>();
  readonly afterGroup: { msg: ImMessage; groupId: bigint; serverId: bigint }[] = [];
  static pair = (a: bigint, b: bigint) => (a < b ? `${a}:${b}` : `${b}:${a}`);
  befriend(a: bigint, b: bigint): this {
    this.friends.add(TestSocial.pair(a, b));
    return this;
  }
  /** `owner` blocks `blocked`. */
  deny(owner: bigint, blocked: bigint): this {
    this.denied.add(`${owner}>${blocked}`);
    return this;
  }
  async checkC2C(from: bigint, to: bigint, opts: { readonly encrypted: boolean }): Promise<Result<void>> {
    return this.c2c(from, to, opts);
  }
  /** Like the real graph's warm cache: every answer at once (tests that need a slow check replace it). */
  checkC2CNow(from: bigint, to: bigint, opts: { readonly encrypted: boolean }): Result<void> | undefined {
    return this.c2c(from, to, opts);
  }
  c2c(from: bigint, to: bigint, _opts: { readonly encrypted: boolean }): Result<void> {
    if (to === 999n) return fail("permission_denied", "that account cannot receive messages");
    if (this.denied.has(`${to}>${from}`)) return fail("in_denylist", "you are on the receiver's denylist");
    if (!this.friends.has(TestSocial.pair(from, to))) return fail("not_a_friend", "not a friend");
    return ok(undefined);
  }
  async groupMembers(userId: bigint, groupId: bigint): Promise<Result<readonly bigint[]>> {
    return this.members(userId, groupId);
  }
  groupMembersNow(userId: bigint, groupId: bigint): Result<readonly bigint[]> | undefined {
    return this.members(userId, groupId);
  }
  members(userId: bigint, groupId: bigint): Result<readonly bigint[]> {
    const members = this.groups.get(groupId);
    if (!members) return fail("not_found", "group not found");
    if (!members.includes(userId)) return fail("not_group_member", "not a member of this group");
    return ok(members);
  }
  /** Presence notices are stored S2C: off unless a test is about them, so other tests see only their own messages. */
  presence = false;
  async friendsOf(userId: bigint): Promise<readonly bigint[]> {
    if (!this.presence) return [];
    return [...this.friends].map((p) => p.split(":").map(BigInt)).filter((p) => p.includes(userId)).map((p) => (p[0] === userId ? p[1]! : p[0]!));
  }
  async afterGroupMessage(msg: ImMessage, groupId: bigint, serverId: bigint): Promise<void> {
    this.afterGroup.push({ msg, groupId, serverId });
  }
}

export class FakeClock {
  constructor(public ms = Date.UTC(2026, 10, 23, 9, 0, 0)) {}
  readonly now = () => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

export function testServices(store: Store, clock: FakeClock, overrides: Partial<Config> = {}, marks?: MarkShare): Services {
  return {
    ...(marks ? { marks } : {}),
    config: testConfig({ nodeId: 1, ...overrides }),
    log: createLogger((process.env.TEST_LOG as "silent") ?? "silent"),
    store,
    ids: new IdGenerator(1, clock.now),
    nodeId: 1,
    secrets: undefined as never,
    tokens: undefined as never,
    accounts: undefined as never,
    sessions: undefined as never,
    loginRsa: undefined,
    now: clock.now,
    bus: undefined as never,
    presence: undefined as never,
    lifecycle: undefined as never,
  };
}

export interface Rig {
  readonly delivery: Delivery;
  /** A group of `members` in the social graph and in the timeline spans (joined now). */
  group(gid: bigint, members: bigint[]): Promise<void>;
  readonly sessions: TestSessions;
  readonly social: TestSocial;
  readonly clock: FakeClock;
  /** Advances the fake clock and the retry wheel. */
  advance(ms: number): void;
  /** Waits until every uplink and background step in progress has finished and batches committed. */
  settle(): Promise<void>;
}

/** The real engine over `store`; `marks` is the mark share (default: this process's memory). */
export function deliveryOn(store: Store, overrides: Partial<Config> = {}, marks?: MarkShare): Rig {
  const clock = new FakeClock();
  const sessions = new TestSessions();
  const social = new TestSocial();
  const delivery = createDelivery(testServices(store, clock, overrides, marks), { sessions, social });
  sessions.delivery = delivery;
  return {
    delivery,
    sessions,
    social,
    clock,
    advance(ms) {
      clock.advance(ms);
      delivery.core.wheel.advance();
    },
    settle: () => delivery.flush(),
    group: (gid, members) => joinGroup(store, social, gid, members),
  };
}

/** `members` (join now) of group `gid`: in the stand-in social graph and in the timeline spans, as the real graph does. */
export async function joinGroup(store: Store, social: TestSocial, gid: bigint, members: bigint[]): Promise<void> {
  const before = social.groups.get(gid) ?? [];
  social.groups.set(gid, [...new Set([...before, ...members])]);
  await openSpans(store.db, gid, members.filter((m) => !before.includes(m)));
}

/** Every delivery table, emptied between tests that share a store. */
export const DELIVERY_TABLES = "messages, inbox, delivery_mark, delivery_device, timeline, timeline_head, timeline_member, timeline_cursor";

let seq = 0;
/** A well-formed uplink message. */
export function uplink(type: "C2C" | "C2G" | "C2S", from: bigint, to: bigint, over: Record<string, unknown> = {}): Record<string, unknown> {
  seq++;
  return {
    id: `${type}.${1000n + BigInt(seq)}.${Date.now()}.r${seq}`,
    type,
    from,
    to,
    msg_type: "text",
    payload: type === "C2S" ? { text: `hello ${seq}`, topic_id: 7 } : { text: `hello ${seq}` },
    created_at: Date.now(),
    ...over,
  };
}

/** Well-formed §2.8 E2EE metadata (the payload beside it is a Base64 string). */
export const E2EE: E2eeMeta = {
  e2ee: true,
  e2ee_ver: 1,
  e2ee_suite: "RSA-OAEP-256+AES-256-GCM",
  nonce: "AAECAwQFBgcICQoL",
  keys: [{ did: "dev-1", kid: "k1", wrap_alg: "RSA-OAEP-256", ek: "ZWs=" }],
};

/**
 * Holds the first connect check (InboxReader.openDevices) that names
 * `deviceId` until `release()`, as a busy store may: a race with that check
 * can then be staged. `restore()` puts the real method back (releasing too).
 */
export function holdDeviceCheck(inbox: InboxReader, deviceId: string) {
  const real = inbox.openDevices;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held = false;
  inbox.openDevices = async function (reqs) {
    if (!held && reqs.some((r) => r.deviceId === deviceId)) {
      held = true;
      await gate;
    }
    return real.call(this, reqs);
  };
  return {
    release: () => release(),
    get held() {
      return held;
    },
    restore() {
      release();
      inbox.openDevices = real;
    },
  };
}
