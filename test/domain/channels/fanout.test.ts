/** The per-node push fan-out on a real store: both walks (online users in chunks, subscriptions in pages) reach exactly the online subscribers with their own counts. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { ChannelFanout, UNREAD_ACTION, type LocalPush } from "../../../src/domain/channels/fanout.ts";
import { createLogger } from "../../../src/log.ts";
import { freshStore, storeKinds, type TestStore } from "../../support/stores.ts";

class FakeLocal implements LocalPush {
  readonly sent: [bigint, string, Record<string, unknown>][] = [];
  constructor(readonly online_: Set<bigint>) {}
  users() {
    return this.online_.values();
  }
  get userCount() {
    return this.online_.size;
  }
  online(u: bigint) {
    return this.online_.has(u);
  }
  push(u: bigint, action: string, payload: Record<string, unknown>) {
    if (!this.online_.has(u)) return 0;
    this.sent.push([u, action, payload]);
    return 1;
  }
  counts() {
    return new Map(this.sent.map(([u, , p]) => [u, p.unread_count as number]));
  }
}

const CH = 7_300_000_000_000_000_001n;
const U = (i: number) => 7_300_000_000_000_100_000n + BigInt(i);

for (const kind of storeKinds()) {
  describe(`channel fan-out [${kind}]`, () => {
    let ts: TestStore;
    beforeAll(async () => {
      ts = await freshStore(kind);
      const now = Date.now();
      await ts.store.rows(sql`insert into channel (id, owner_id, name, visibility, access_type, join_policy, last_seq, subscriber_count, created_at, updated_at)
        values (${CH}, 1, 'c', 0, 0, 0, 10, 7, ${now}, ${now})`);
      // Subscribers 0..6 with read cursors 0..6: unread 10 - i.
      for (let i = 0; i < 7; i++) {
        await ts.store.rows(sql`insert into channel_subscription (channel_id, user_id, read_seq, subscribed_at) values (${CH}, ${U(i)}, ${i}, ${now})`);
      }
    });
    afterAll(() => ts.dispose());

    // Online: subscribers 1, 2, 4, 6 and two users who do not subscribe.
    const online = () => new Set([U(1), U(2), U(4), U(6), U(50), U(51)]);
    const expected = new Map([
      [U(1), 9],
      [U(2), 8],
      [U(4), 6],
      [U(6), 4],
    ]);

    for (const [walk, subscribers] of [
      ["online users in chunks (more subscribers than online users)", 1_000_000],
      ["subscriptions in pages (fewer subscribers than online users)", 1],
      ["subscriber count read from the channel row (no hint)", undefined],
    ] as const) {
      test(walk, async () => {
        const local = new FakeLocal(online());
        const f = new ChannelFanout(ts.store, local, createLogger("silent"), 2);
        f.enqueue({ channelId: CH, action: UNREAD_ACTION, ...(subscribers !== undefined ? { subscribers } : {}) });
        await f.idle();
        expect(local.counts()).toEqual(expected);
        expect(local.sent).toHaveLength(4);
        expect(local.sent.every(([, a, p]) => a === UNREAD_ACTION && p.channel_id === CH)).toBe(true);
        expect(f.counters.queries).toBeGreaterThanOrEqual(subscribers === 1 ? 4 : 3); // several chunks or pages: chunk size 2
      });
    }

    test("queued unread events for one channel coalesce; a user-restricted event reaches only that user", async () => {
      const local = new FakeLocal(online());
      const f = new ChannelFanout(ts.store, local, createLogger("silent"), 2);
      for (let i = 0; i < 5; i++) f.enqueue({ channelId: CH, action: UNREAD_ACTION, subscribers: 7 });
      f.enqueue({ channelId: CH, action: UNREAD_ACTION, userIds: [U(2), U(3)] });
      await f.idle();
      expect(f.counters.events).toBe(2);
      expect(local.sent.filter(([u]) => u === U(2))).toHaveLength(2);
      expect(local.sent).toHaveLength(5);
    });

    test("edit events carry their payload as is (ids exact); a deleted channel pushes nothing", async () => {
      const local = new FakeLocal(online());
      const f = new ChannelFanout(ts.store, local, createLogger("silent"), 2);
      f.enqueue({ channelId: CH, action: "channel_message_edited", payload: `{"message_id":${CH},"edited_at":"2026-11-25T08:07:50.959179Z"}` });
      await f.idle();
      const byUser = (a: [bigint, unknown], b: [bigint, unknown]) => (a[0] < b[0] ? -1 : 1);
      const got = local.sent.map(([u, , p]): [bigint, unknown] => [u, p.message_id]).sort(byUser);
      expect(got).toEqual([...expected.keys()].map((u): [bigint, unknown] => [u, CH]).sort(byUser));
      await ts.store.rows(sql`update channel set deleted_at = ${Date.now()} where id = ${CH}`);
      const after = new FakeLocal(online());
      const g = new ChannelFanout(ts.store, after, createLogger("silent"), 2);
      for (const subscribers of [1, 1_000_000]) g.enqueue({ channelId: CH, action: "channel_message_revoked", payload: "{}", subscribers });
      await g.idle();
      expect(after.sent).toEqual([]);
    });
  });
}
