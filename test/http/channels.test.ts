import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Incoming } from "../../src/client/incoming.ts";
import { storeKinds } from "../support/stores.ts";
import { channelEnv, payloadOf, type ChannelEnv, type TestUser } from "./channel.support.ts";
import { MAX_REACTIONS_PER_USER } from "../../src/domain/channels/messages.ts";

const RFC3339_MICRO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

for (const kind of storeKinds()) {
  describe(`channels [${kind}]`, () => {
    let env: ChannelEnv;
    beforeAll(async () => {
      env = await channelEnv(kind);
    });
    afterAll(() => env.stop());

    test("create answers the channel object; ids exact; a tuple outside §2.6 is refused", async () => {
      const o = await env.user();
      const c = await env.channel(o, "public_paid", { description: "d", tags: ["tech", "ai"], custom_id: `news-${o.id}`, price: 990 });
      expect(typeof c.channel_id).toBe("bigint");
      expect(c).toMatchObject({
        name: "news",
        description: "d",
        tags: ["tech", "ai"],
        custom_id: `news-${o.id}`,
        visibility: 0,
        access_type: 1,
        join_policy: 3,
        price: 990,
        owner_uid: o.id,
        owner_user_id: o.id,
        subscriber_count: 0,
        last_seq: 0,
        is_creator: true,
        admin_role: 0,
        is_subscribed: false,
      });
      const bad = await env.call(o, "POST", "/api/v1/channel/create", { name: "x", visibility: 1, access_type: 1, join_policy: 1 });
      expect(bad.body.code).toBe(400);
      expect((await env.call(o, "POST", "/api/v1/channel/create", { name: "x", visibility: 0 })).body.code).toBe(400);
      expect((await env.call(o, "POST", "/api/v1/channel/create", { name: "", ...{ visibility: 0, access_type: 0, join_policy: 0 } })).body.code).toBe(400);
      // custom ids are unique among live channels
      expect((await env.call(o, "POST", "/api/v1/channel/create", { name: "y", visibility: 0, access_type: 0, join_policy: 0, custom_id: `news-${o.id}` })).body.code).toBe(409);
      const got = payloadOf(await env.call(o, "GET", `/api/v1/channel/by_custom_id/news-${o.id}`));
      expect(got.channel_id).toBe(c.channel_id);
    });

    test("§7.3 business codes: channel id empty, user id empty, role range, order number empty, channel and order not found", async () => {
      const o = await env.user();
      const c = await env.channel(o);
      const id = c.channel_id;
      const u = await env.user();
      // No path parameter on these: the body fallback is empty.
      expect(await env.code(o, "POST", `/api/v1/channel/${id}/admin`, { role: 2 })).toBe(961);
      expect(await env.code(o, "POST", `/api/v1/channel/${id}/admin`, { user_id: u.id, role: 4 })).toBe(962);
      expect(await env.code(o, "POST", `/api/v1/channel/${id}/admin`, { user_id: u.id, role: 0 })).toBe(962);
      expect(await env.code(o, "POST", `/api/v1/channel/${id}/admin`, { user_id: u.id, role: "x" })).toBe(962);
      expect(await env.code(o, "PUT", `/api/v1/channel/${id}/admin/${u.id}/role`, { role: 9 })).toBe(962);
      expect(await env.code(o, "POST", "/api/v1/channel/order/pay", {})).toBe(963);
      expect(await env.code(o, "POST", "/api/v1/channel/order/pay", { order_no: "CO1" })).toBe(965);
      expect(await env.code(o, "GET", "/api/v1/channel/order/CO1")).toBe(965);
      expect(await env.code(o, "GET", "/api/v1/channel/424242")).toBe(964);
      expect(await env.code(o, "GET", "/api/v1/channel/by_custom_id/nope")).toBe(964);
      expect(await env.code(o, "POST", `/api/v1/channel/${id}/invitation`, {})).toBe(961);
      expect(await env.code(o, "GET", "/api/v1/channel/abc")).toBe(400);
      const res = await env.call(o, "GET", "/api/v1/channel/424242");
      expect(res.status).toBe(200);
      expect(res.body.msg).toBe("channel not found");
    });

    test("the path parameter wins over body and query", async () => {
      const o = await env.user();
      const a = await env.channel(o);
      const b = await env.channel(o);
      const m = await env.publish(o, a.channel_id, "in a", { channel_id: b.channel_id });
      expect(m.channel_id).toBe(a.channel_id);
      const listed = payloadOf(await env.call(o, "GET", `/api/v1/channel/${a.channel_id}/messages?channel_id=${b.channel_id}`));
      expect(listed.list.map((x: any) => x.message_id)).toEqual([m.message_id]);
      const u = await env.user();
      const other = await env.user();
      payloadOf(await env.call(o, "POST", `/api/v1/channel/${a.channel_id}/admin`, { user_id: u.id, role: 2 }));
      payloadOf(await env.call(o, "POST", `/api/v1/channel/${a.channel_id}/admin`, { user_id: other.id, role: 3 }));
      // DELETE …/admin/:user_id with another user_id in the body: the path's user goes.
      payloadOf(await env.call(o, "DELETE", `/api/v1/channel/${a.channel_id}/admin/${u.id}`, { user_id: other.id }));
      const admins = payloadOf(await env.call(o, "GET", `/api/v1/channel/${a.channel_id}/admins`));
      expect(admins.list.map((x: any) => x.user_id)).toEqual([other.id]);
    });

    test("publish is idempotent per author and channel by request_id; seqs have no gaps", async () => {
      const o = await env.user();
      const admin = await env.user();
      const c = await env.channel(o);
      payloadOf(await env.call(o, "POST", `/api/v1/channel/${c.channel_id}/admin`, { user_id: admin.id, role: 3 }));
      const first = await env.publish(o, c.channel_id, "one", { request_id: "r1", payload: { big: 7_300_000_000_000_000_123n } });
      const again = await env.publish(o, c.channel_id, "changed", { request_id: "r1" });
      expect(again).toEqual(first);
      expect(first.payload).toEqual({ big: 7_300_000_000_000_000_123n });
      // Same request id, another author: a different message.
      const byAdmin = await env.publish(admin, c.channel_id, "two", { request_id: "r1" });
      expect(byAdmin.message_id).not.toBe(first.message_id);
      // Concurrent resends of one request: one message.
      const burst = await Promise.all(Array.from({ length: 5 }, () => env.publish(o, c.channel_id, "three", { request_id: "r3" })));
      expect(new Set(burst.map((m) => m.message_id)).size).toBe(1);
      const four = await env.publish(o, c.channel_id, "four");
      expect([first.seq, byAdmin.seq, burst[0].seq, four.seq]).toEqual([1, 2, 3, 4]);
      const got = payloadOf(await env.call(o, "GET", `/api/v1/channel/${c.channel_id}`));
      expect(got.last_seq).toBe(4);
    });

    test("message list: newest first, cursor by seq, limit bounded", async () => {
      const o = await env.user();
      const c = await env.channel(o);
      for (let i = 1; i <= 5; i++) await env.publish(o, c.channel_id, `m${i}`);
      const p1 = payloadOf(await env.call(o, "GET", `/api/v1/channel/${c.channel_id}/messages?limit=2`));
      expect(p1.list.map((m: any) => m.content)).toEqual(["m5", "m4"]);
      expect(p1.cursor).toBe(4);
      const p2 = payloadOf(await env.call(o, "GET", `/api/v1/channel/${c.channel_id}/messages?limit=2&cursor=${p1.cursor}`));
      expect(p2.list.map((m: any) => m.content)).toEqual(["m3", "m2"]);
      const p3 = payloadOf(await env.call(o, "GET", `/api/v1/channel/${c.channel_id}/messages?limit=2&cursor=${p2.cursor}`));
      expect(p3.list.map((m: any) => m.content)).toEqual(["m1"]);
      expect(p3.cursor).toBeNull();
      expect(await env.code(o, "GET", `/api/v1/channel/${c.channel_id}/messages?cursor=x`)).toBe(400);
      const huge = payloadOf(await env.call(o, "GET", `/api/v1/channel/${c.channel_id}/messages?limit=99999`));
      expect(huge.limit).toBe(100);
    });

    test("subscribe, subscribed list with cursor paging, unsubscribe; counts follow", async () => {
      const o = await env.user();
      const u = await env.user();
      const ids: bigint[] = [];
      for (let i = 0; i < 3; i++) {
        const c = await env.channel(o);
        ids.push(c.channel_id);
        payloadOf(await env.call(u, "POST", `/api/v1/channel/${c.channel_id}/subscribe`));
        payloadOf(await env.call(u, "POST", `/api/v1/channel/${c.channel_id}/subscribe`)); // idempotent
      }
      expect(payloadOf(await env.call(o, "GET", `/api/v1/channel/${ids[0]}`)).subscriber_count).toBe(1);
      const p1 = payloadOf(await env.call(u, "GET", "/api/v1/channels/subscribed?limit=2"));
      expect(p1.list.map((c: any) => c.channel_id)).toEqual(ids.slice(0, 2));
      expect(p1.limit).toBe(2);
      expect(p1.cursor).toBe(ids[1]);
      const p2 = payloadOf(await env.call(u, "GET", `/api/v1/channels/subscribed?limit=2&cursor=${p1.cursor}`));
      expect(p2.list.map((c: any) => c.channel_id)).toEqual([ids[2]]);
      expect(p2.cursor).toBeNull();
      payloadOf(await env.call(u, "POST", `/api/v1/channel/${ids[0]}/unsubscribe`));
      payloadOf(await env.call(u, "POST", `/api/v1/channel/${ids[0]}/unsubscribe`));
      expect(payloadOf(await env.call(o, "GET", `/api/v1/channel/${ids[0]}`)).subscriber_count).toBe(0);
      const managed = payloadOf(await env.call(o, "GET", "/api/v1/channels/managed"));
      expect(managed.list.map((c: any) => c.channel_id)).toEqual([...ids].reverse());
    });

    test("unread: summary from cursors; mark read moves the cursor forward only", async () => {
      const o = await env.user();
      const u = await env.user();
      const a = await env.channel(o);
      const b = await env.channel(o);
      await env.publish(o, a.channel_id, "before"); // published before subscribing: not unread
      for (const c of [a, b]) payloadOf(await env.call(u, "POST", `/api/v1/channel/${c.channel_id}/subscribe`));
      const msgs = [];
      for (let i = 0; i < 3; i++) msgs.push(await env.publish(o, a.channel_id, `a${i}`));
      await env.publish(o, b.channel_id, "b0");
      let s = payloadOf(await env.call(u, "GET", "/api/v1/channels/unread/summary"));
      expect(s).toEqual({
        total_unread: 4,
        unread_channels: 2,
        channels: [
          { channel_id: a.channel_id, unread_count: 3 },
          { channel_id: b.channel_id, unread_count: 1 },
        ],
      });
      payloadOf(await env.call(u, "POST", `/api/v1/channel/${a.channel_id}/read`, { message_id: msgs[1].message_id }));
      payloadOf(await env.call(u, "POST", `/api/v1/channel/${a.channel_id}/read`, { message_id: msgs[0].message_id })); // never back
      s = payloadOf(await env.call(u, "GET", "/api/v1/channels/unread/summary"));
      // Equal counts: channel id ascending.
      expect(s.channels).toEqual([
        { channel_id: a.channel_id, unread_count: 1 },
        { channel_id: b.channel_id, unread_count: 1 },
      ]);
      expect(await env.code(u, "POST", `/api/v1/channel/${a.channel_id}/read`, {})).toBe(400);
      expect(await env.code(u, "POST", `/api/v1/channel/${b.channel_id}/read`, { message_id: msgs[2].message_id })).toBe(967);
      const sub = payloadOf(await env.call(u, "GET", "/api/v1/channels/subscribed"));
      expect(sub.list.find((c: any) => c.channel_id === a.channel_id).unread_count).toBe(1);
    });

    test(`one user holds at most ${MAX_REACTIONS_PER_USER} reaction types on a message (the reactions map stays small)`, async () => {
      const o = await env.user();
      const u = await env.user();
      const c = await env.channel(o);
      const m = await env.publish(o, c.channel_id);
      const base = `/api/v1/channel/${c.channel_id}/message/${m.message_id}`;
      for (let i = 0; i < MAX_REACTIONS_PER_USER; i++) payloadOf(await env.call(u, "POST", `${base}/reaction`, { reaction_type: `r${i}` }));
      const over = await env.call(u, "POST", `${base}/reaction`, { reaction_type: "one-more" });
      expect(over.body).toMatchObject({ code: 400, msg: expect.stringMatching(/at most/) });
      payloadOf(await env.call(u, "POST", `${base}/reaction`, { reaction_type: "r0" })); // one already held: still a no-op success
      payloadOf(await env.call(o, "POST", `${base}/reaction`, { reaction_type: "owner" })); // another user's budget is their own
      payloadOf(await env.call(u, "DELETE", `${base}/reaction/r0`));
      payloadOf(await env.call(u, "POST", `${base}/reaction`, { reaction_type: "one-more" }));
      const [got] = payloadOf(await env.call(u, "GET", `/api/v1/channel/${c.channel_id}/messages`)).list;
      expect(got.reaction_count).toBe(MAX_REACTIONS_PER_USER + 1);
    });

    test("views count once per user and message; reactions idempotent per type and counted", async () => {
      const o = await env.user();
      const u = await env.user();
      const w = await env.user();
      const c = await env.channel(o);
      const m = await env.publish(o, c.channel_id);
      const base = `/api/v1/channel/${c.channel_id}/message/${m.message_id}`;
      for (const who of [u, u, w]) payloadOf(await env.call(who, "POST", `${base}/view`));
      payloadOf(await env.call(u, "POST", `${base}/reaction`, { reaction_type: "fire" }));
      payloadOf(await env.call(u, "POST", `${base}/reaction`, { reaction_type: "fire" }));
      payloadOf(await env.call(u, "POST", `${base}/reaction`)); // default "like"
      payloadOf(await env.call(w, "POST", `${base}/reaction`, { reaction_type: "fire" }));
      let [got] = payloadOf(await env.call(u, "GET", `/api/v1/channel/${c.channel_id}/messages`)).list;
      expect(got).toMatchObject({ view_count: 2, reaction_count: 3, reactions: { fire: 2, like: 1 } });
      payloadOf(await env.call(w, "DELETE", `${base}/reaction/fire`));
      payloadOf(await env.call(w, "DELETE", `${base}/reaction/fire`));
      [got] = payloadOf(await env.call(u, "GET", `/api/v1/channel/${c.channel_id}/messages`)).list;
      expect(got).toMatchObject({ reaction_count: 2, reactions: { fire: 1, like: 1 } });
      expect(await env.code(u, "POST", `/api/v1/channel/${c.channel_id}/message/424242/view`)).toBe(967);
      const stats = payloadOf(await env.call(o, "GET", `/api/v1/channel/${c.channel_id}/stats`));
      expect(stats).toMatchObject({ message_count: 1, view_count: 2, reaction_count: 2, subscriber_count: 0 });
      const daily = payloadOf(await env.call(o, "GET", `/api/v1/channel/${c.channel_id}/stats/daily?days=3`));
      expect(daily.list).toHaveLength(3);
      expect(daily.list[0]).toMatchObject({ date: new Date().toISOString().slice(0, 10), messages: 1, views: 2, reactions: 2 });
      expect(daily.list[1]).toMatchObject({ messages: 0, views: 0 });
      expect(await env.code(o, "GET", `/api/v1/channel/${c.channel_id}/stats/daily?days=0`)).toBe(400);
      expect(payloadOf(await env.call(o, "GET", `/api/v1/channel/${c.channel_id}/stats/daily?days=5000`)).list).toHaveLength(90);
    });

    test("admins: roles 1–3; a role-1 admin manages roles below it only; role 3 publishes but cannot update", async () => {
      const o = await env.user();
      const [a1, a2, a3, x] = [await env.user(), await env.user(), await env.user(), await env.user()];
      const c = await env.channel(o);
      const id = c.channel_id;
      payloadOf(await env.call(o, "POST", `/api/v1/channel/${id}/admin`, { user_id: a1.id, role: 1 }));
      payloadOf(await env.call(a1, "POST", `/api/v1/channel/${id}/admin`, { user_id: a2.id, role: 2 }));
      payloadOf(await env.call(a1, "POST", `/api/v1/channel/${id}/admin`, { user_id: a3.id, role: 3 }));
      expect(await env.code(a1, "POST", `/api/v1/channel/${id}/admin`, { user_id: x.id, role: 1 })).toBe(966);
      expect(await env.code(a2, "POST", `/api/v1/channel/${id}/admin`, { user_id: x.id, role: 3 })).toBe(966);
      expect(await env.code(o, "POST", `/api/v1/channel/${id}/admin`, { user_id: o.id, role: 1 })).toBe(400);
      expect(await env.code(o, "POST", `/api/v1/channel/${id}/admin`, { user_id: 424242, role: 1 })).toBe(940);
      payloadOf(await env.call(a1, "PUT", `/api/v1/channel/${id}/admin/${a3.id}/role`, { role: 2 }));
      const list = payloadOf(await env.call(a3, "GET", `/api/v1/channel/${id}/admins`)).list;
      expect(list.map((a: any) => [a.user_id, a.role])).toEqual([
        [a1.id, 1],
        [a2.id, 2],
        [a3.id, 2],
      ]);
      payloadOf(await env.call(a1, "PUT", `/api/v1/channel/${id}/admin/${a3.id}/role`, { role: 3 }));
      expect((await env.publish(a3, id, "from editor")).author_uid).toBe(a3.id);
      expect(await env.code(a3, "POST", `/api/v1/channel/${id}/update`, { name: "n" })).toBe(966);
      expect(payloadOf(await env.call(a2, "PUT", `/api/v1/channel/${id}/update`, { name: "renamed", tags: ["x"] })).name).toBe("renamed");
      expect(await env.code(a1, "DELETE", `/api/v1/channel/${id}/admin/${o.id}`)).toBe(404);
      expect(await env.code(a1, "POST", `/api/v1/channel/${id}/delete`)).toBe(966);
      payloadOf(await env.call(o, "POST", `/api/v1/channel/${id}/delete`));
      expect(await env.code(o, "GET", `/api/v1/channel/${id}`)).toBe(964);
    });

    test("subscribers: managers list with cursor paging and remove", async () => {
      const o = await env.user();
      const c = await env.channel(o);
      const subs: TestUser[] = [];
      for (let i = 0; i < 3; i++) {
        const u = await env.user();
        subs.push(u);
        payloadOf(await env.call(u, "POST", `/api/v1/channel/${c.channel_id}/subscribe`));
      }
      const p1 = payloadOf(await env.call(o, "GET", `/api/v1/channel/${c.channel_id}/subscribers?limit=2`));
      expect(p1.list.map((s: any) => s.user_id)).toEqual(subs.slice(0, 2).map((u) => u.id));
      const p2 = payloadOf(await env.call(o, "GET", `/api/v1/channel/${c.channel_id}/subscribers?limit=2&cursor=${p1.cursor}`));
      expect(p2.list.map((s: any) => s.user_id)).toEqual([subs[2]!.id]);
      payloadOf(await env.call(o, "DELETE", `/api/v1/channel/${c.channel_id}/subscriber/${subs[0]!.id}`));
      expect(await env.code(o, "DELETE", `/api/v1/channel/${c.channel_id}/subscriber/${subs[0]!.id}`)).toBe(404);
      expect(await env.code(subs[1]!, "GET", `/api/v1/channel/${c.channel_id}/subscribers`)).toBe(966);
      expect(payloadOf(await env.call(o, "GET", `/api/v1/channel/${c.channel_id}`)).subscriber_count).toBe(2);
    });

    test("invitation lifecycle: pending → accepted (subscribes a free channel) / rejected / expired; only the invitee answers", async () => {
      const o = await env.user();
      const [inv, other, late] = [await env.user(), await env.user(), await env.user()];
      const c = await env.channel(o, "private_free");
      const id = c.channel_id;
      // The private channel is hidden from the invitee until invited.
      expect(await env.code(inv, "GET", `/api/v1/channel/${id}`)).toBe(964);
      const i = payloadOf(await env.call(o, "POST", `/api/v1/channel/${id}/invitation`, { invitee_uid: inv.id }));
      expect(i).toMatchObject({ channel_id: id, inviter_uid: o.id, invitee_uid: inv.id, status: "pending" });
      expect(payloadOf(await env.call(o, "POST", `/api/v1/channel/${id}/invitation`, { invitee_uid: inv.id })).invitation_id).toBe(i.invitation_id);
      expect(payloadOf(await env.call(inv, "GET", `/api/v1/channel/${id}`)).name).toBe("news");
      expect(await env.code(inv, "GET", `/api/v1/channel/${id}/messages`)).toBe(966);
      // Someone else cannot answer it.
      expect(await env.code(other, "POST", "/api/v1/channel/invitation/accept", { invitation_id: i.invitation_id })).toBe(403);
      expect(await env.code(o, "POST", "/api/v1/channel/invitation/accept", { invitation_id: i.invitation_id })).toBe(403);
      payloadOf(await env.call(inv, "POST", "/api/v1/channel/invitation/accept", { invitation_id: i.invitation_id }));
      expect(await env.code(inv, "POST", "/api/v1/channel/invitation/accept", { invitation_id: i.invitation_id })).toBe(969);
      expect(await env.code(inv, "POST", "/api/v1/channel/invitation/reject", { invitation_id: i.invitation_id })).toBe(969);
      expect(payloadOf(await env.call(inv, "GET", `/api/v1/channel/${id}`)).is_subscribed).toBe(true);
      expect(await env.code(inv, "GET", `/api/v1/channel/${id}/messages`)).toBe(0);
      const mine = payloadOf(await env.call(inv, "GET", "/api/v1/channel/invitations/my"));
      expect(mine.list.map((x: any) => [x.invitation_id, x.status, x.channel_name])).toEqual([[i.invitation_id, "accepted", "news"]]);
      // Rejected.
      const j = payloadOf(await env.call(o, "POST", `/api/v1/channel/${id}/invitation`, { invitee_uid: other.id }));
      payloadOf(await env.call(other, "POST", "/api/v1/channel/invitation/reject", { invitation_id: j.invitation_id }));
      expect(await env.code(other, "POST", "/api/v1/channel/invitation/accept", { invitation_id: j.invitation_id })).toBe(969);
      expect(await env.code(other, "POST", `/api/v1/channel/${id}/subscribe`)).toBe(964);
      // Expired: past its TTL it reads as expired and cannot be accepted.
      const k = payloadOf(await env.call(o, "POST", `/api/v1/channel/${id}/invitation`, { invitee_uid: late.id }));
      await env.node.services.store.rows(
        (await import("drizzle-orm")).sql`update channel_invitation set expires_at = ${Date.now() - 1} where id = ${k.invitation_id}`,
      );
      expect(await env.code(late, "POST", "/api/v1/channel/invitation/accept", { invitation_id: k.invitation_id })).toBe(969);
      const sent = payloadOf(await env.call(o, "GET", "/api/v1/channel/invitations/sent"));
      expect(sent.list.map((x: any) => x.status)).toEqual(["expired", "rejected", "accepted"]);
      expect(await env.code(inv, "POST", "/api/v1/channel/invitation/accept", { invitation_id: 424242 })).toBe(968);
      expect(await env.code(o, "POST", `/api/v1/channel/${id}/invitation`, { invitee_uid: 424242 })).toBe(940);
    });

    test("order lifecycle: created → paid (subscribes, opens content) / cancelled; double pay and someone else's pay refused", async () => {
      const o = await env.user();
      const [buyer, thief] = [await env.user(), await env.user()];
      const c = await env.channel(o, "public_paid", { price: 1200 });
      const id = c.channel_id;
      await env.publish(o, id, "paid content");
      expect(await env.code(buyer, "GET", `/api/v1/channel/${id}/messages`)).toBe(966);
      expect(await env.code(buyer, "POST", `/api/v1/channel/${id}/subscribe`)).toBe(966);
      const order = payloadOf(await env.call(buyer, "POST", `/api/v1/channel/${id}/order`));
      expect(order).toMatchObject({ channel_id: id, user_id: buyer.id, amount: 1200, currency: "CNY", status: "created" });
      expect(typeof order.order_no).toBe("string");
      // A second create returns the open order.
      expect(payloadOf(await env.call(buyer, "POST", `/api/v1/channel/${id}/order`)).order_no).toBe(order.order_no);
      expect(await env.code(thief, "POST", "/api/v1/channel/order/pay", { order_no: order.order_no })).toBe(965);
      expect(await env.code(thief, "GET", `/api/v1/channel/order/${order.order_no}`)).toBe(965);
      const paid = payloadOf(await env.call(buyer, "POST", "/api/v1/channel/order/pay", { order_no: order.order_no }));
      expect(paid).toMatchObject({ status: "paid", provider: "dev" });
      expect(typeof paid.paid_at).toBe("number");
      const twice = await env.call(buyer, "POST", "/api/v1/channel/order/pay", { order_no: order.order_no });
      expect(twice.body).toMatchObject({ code: 970, msg: "order already paid" });
      expect(payloadOf(await env.call(buyer, "GET", `/api/v1/channel/${id}/messages`)).list).toHaveLength(1);
      expect(payloadOf(await env.call(buyer, "GET", `/api/v1/channel/${id}`)).is_subscribed).toBe(true);
      expect(await env.code(buyer, "POST", `/api/v1/channel/${id}/order`)).toBe(409);
      expect(payloadOf(await env.call(buyer, "GET", `/api/v1/channel/order/${order.order_no}`)).status).toBe("paid");
      // Cancelled.
      const o2 = payloadOf(await env.call(thief, "POST", `/api/v1/channel/${id}/order`));
      expect(payloadOf(await env.call(thief, "POST", "/api/v1/channel/order/cancel", { order_no: o2.order_no })).status).toBe("cancelled");
      expect(await env.code(thief, "POST", "/api/v1/channel/order/pay", { order_no: o2.order_no })).toBe(970);
      expect(payloadOf(await env.call(thief, "GET", "/api/v1/channel/orders/my")).list.map((x: any) => x.status)).toEqual(["cancelled"]);
      // Free channels sell nothing; a private paid channel sells only to an invitee.
      const free = await env.channel(o);
      expect(await env.code(buyer, "POST", `/api/v1/channel/${free.channel_id}/order`)).toBe(966);
      const priv = await env.channel(o, "private_paid", { price: 100 });
      expect(await env.code(buyer, "POST", `/api/v1/channel/${priv.channel_id}/order`)).toBe(964);
      const inv = payloadOf(await env.call(o, "POST", `/api/v1/channel/${priv.channel_id}/invitation`, { invitee_uid: buyer.id }));
      payloadOf(await env.call(buyer, "POST", "/api/v1/channel/invitation/accept", { invitation_id: inv.invitation_id }));
      expect(payloadOf(await env.call(buyer, "GET", `/api/v1/channel/${priv.channel_id}`)).is_subscribed).toBe(false);
      const po = payloadOf(await env.call(buyer, "POST", `/api/v1/channel/${priv.channel_id}/order`));
      payloadOf(await env.call(buyer, "POST", "/api/v1/channel/order/pay", { order_no: po.order_no }));
      expect(await env.code(buyer, "GET", `/api/v1/channel/${priv.channel_id}/messages`)).toBe(0);
      const stats = payloadOf(await env.call(o, "GET", `/api/v1/channel/${id}/stats`));
      expect(stats).toMatchObject({ paid_order_count: 1, revenue: 1200, subscriber_count: 1 });
    });

    test("search and discover show public channels and, to related users only, private ones; never content", async () => {
      const o = await env.user();
      const sub = await env.user();
      const outsider = await env.user();
      const tag = `t${o.id}`;
      const pub = await env.channel(o, "public_free", { name: `Rocket launch ${o.id}`, tags: [tag] });
      const priv = await env.channel(o, "private_free", { name: `Rocket secrets ${o.id}`, description: "classified", tags: [tag] });
      await env.channel(o, "public_paid", { name: `Other ${o.id}`, tags: ["misc"] });
      const inv = payloadOf(await env.call(o, "POST", `/api/v1/channel/${priv.channel_id}/invitation`, { invitee_uid: sub.id }));
      payloadOf(await env.call(sub, "POST", "/api/v1/channel/invitation/accept", { invitation_id: inv.invitation_id }));
      const search = async (u: TestUser, kw: string) =>
        payloadOf(await env.call(u, "GET", `/api/v1/channels/search?keyword=${encodeURIComponent(kw)}`)).list.map((c: any) => c.channel_id);
      expect(await search(outsider, `rock ${o.id}`)).toEqual([pub.channel_id]);
      expect(await search(outsider, "classified")).not.toContain(priv.channel_id);
      expect((await search(sub, `rocket ${o.id}`)).sort()).toEqual([pub.channel_id, priv.channel_id].sort());
      expect(await search(outsider, tag)).toEqual([pub.channel_id]);
      expect(await search(outsider, "&|!():*")).toEqual([]);
      expect(await env.code(outsider, "GET", "/api/v1/channels/search")).toBe(400);
      const discover = payloadOf(await env.call(outsider, "GET", `/api/v1/channels/discover?category=${tag}`)).list;
      expect(discover.map((c: any) => c.channel_id)).toEqual([pub.channel_id]);
      // Even a subscriber does not find private channels in discover.
      const d2 = payloadOf(await env.call(sub, "GET", `/api/v1/channels/discover?category=${tag}`)).list;
      expect(d2.map((c: any) => c.channel_id)).toEqual([pub.channel_id]);
      for (const c of [...discover, ...d2]) expect(c).not.toHaveProperty("content");
    });

    test("edit and revoke: RFC 3339 microsecond events to online subscribers; a revoked message is a tombstone", async () => {
      const o = await env.user();
      const sub = await env.user();
      const editor = await env.user();
      const c = await env.channel(o);
      const id = c.channel_id;
      payloadOf(await env.call(sub, "POST", `/api/v1/channel/${id}/subscribe`));
      payloadOf(await env.call(o, "POST", `/api/v1/channel/${id}/admin`, { user_id: editor.id, role: 3 }));
      const ws = await env.socket(sub);
      const m = await env.publish(o, id, "first");
      await ws.nextAction("channel_unread_count");
      // Role 3 may not edit someone else's message.
      expect(await env.code(editor, "POST", `/api/v1/channel/${id}/message/${m.message_id}/edit`, { content: "x" })).toBe(966);
      expect(await env.code(sub, "POST", `/api/v1/channel/${id}/message/${m.message_id}/edit`, { content: "x" })).toBe(966);
      const edited = payloadOf(await env.call(o, "PUT", `/api/v1/channel/${id}/message/${m.message_id}/edit`, { content: "second" }));
      expect(edited.content).toBe("second");
      expect(typeof edited.edited_at).toBe("number");
      const e = await ws.nextAction("channel_message_edited");
      expect(e.type).toBe("S2C");
      expect(e.payload).toMatchObject({ channel_id: id, message_id: m.message_id, seq: 1, content: "second" });
      expect(e.payload.edited_at).toMatch(RFC3339_MICRO);
      expect(Math.abs(Date.parse(e.payload.edited_at) - edited.edited_at)).toBeLessThanOrEqual(1);
      payloadOf(await env.call(o, "POST", `/api/v1/channel/${id}/message/${m.message_id}/revoke`));
      const r = await ws.nextAction("channel_message_revoked");
      expect(r.payload).toMatchObject({ channel_id: id, message_id: m.message_id, seq: 1 });
      expect(r.payload.revoked_at).toMatch(RFC3339_MICRO);
      expect(await env.code(o, "POST", `/api/v1/channel/${id}/message/${m.message_id}/revoke`)).toBe(974);
      expect(await env.code(o, "POST", `/api/v1/channel/${id}/message/${m.message_id}/edit`, { content: "again" })).toBe(974);
      const [tomb] = payloadOf(await env.call(sub, "GET", `/api/v1/channel/${id}/messages`)).list;
      expect(tomb).toMatchObject({ message_id: m.message_id, seq: 1, revoked: true, content: "", payload: null });
      // The tombstone still counts as unread until read past (docs/channels.md).
      expect(payloadOf(await env.call(sub, "GET", "/api/v1/channels/unread/summary")).total_unread).toBe(1);
    });

    test("unread pushes and the summary agree after publishes, reads and unsubscribes (real sockets, two devices)", async () => {
      const o = await env.user();
      const u = await env.user();
      const v = await env.user();
      const a = await env.channel(o);
      const b = await env.channel(o);
      for (const who of [u, v]) for (const c of [a, b]) payloadOf(await env.call(who, "POST", `/api/v1/channel/${c.channel_id}/subscribe`));
      const wu = await env.socket(u, ["svc.v2"]);
      const wv = await env.socket(v, ["svc-json"]);
      const last = new Map<string, bigint | number>();
      const seen = { u: new Map<bigint, number>(), v: new Map<bigint, number>() };
      const drain = async () => {
        await env.settle();
        await Bun.sleep(30);
        for (const [name, conn] of [["u", wu], ["v", wv]] as const) {
          for (const e of (conn.pending as Incoming[]).splice(0)) {
            if (e.kind === "message" && e.msg.action === "channel_unread_count") {
              const p = e.msg.payload as { channel_id: bigint; unread_count: number };
              seen[name].set(p.channel_id, p.unread_count);
            }
          }
        }
      };
      const agree = async (who: TestUser, name: "u" | "v") => {
        const s = payloadOf(await env.call(who, "GET", "/api/v1/channels/unread/summary"));
        for (const { channel_id, unread_count } of s.channels) {
          if (seen[name].has(channel_id)) expect(seen[name].get(channel_id)).toBe(unread_count);
        }
        return s;
      };
      const m1 = await env.publish(o, a.channel_id, "1");
      await env.publish(o, a.channel_id, "2");
      await env.publish(o, b.channel_id, "3");
      await drain();
      expect(seen.u.get(a.channel_id)).toBe(2);
      expect(seen.v.get(b.channel_id)).toBe(1);
      expect((await agree(u, "u")).total_unread).toBe(3);
      await agree(v, "v");
      // Mark read pushes the caller's new count to the caller only.
      payloadOf(await env.call(u, "POST", `/api/v1/channel/${a.channel_id}/read`, { message_id: m1.message_id }));
      await drain();
      expect(seen.u.get(a.channel_id)).toBe(1);
      expect(seen.v.get(a.channel_id)).toBe(2);
      last.clear();
      const m3 = await env.publish(o, a.channel_id, "4");
      payloadOf(await env.call(u, "POST", `/api/v1/channel/${a.channel_id}/read`, { message_id: m3.message_id }));
      await drain();
      expect(seen.u.get(a.channel_id)).toBe(0);
      expect((await agree(u, "u")).total_unread).toBe(1);
      // v leaves b: no more pushes for b, and the summary drops it.
      payloadOf(await env.call(v, "POST", `/api/v1/channel/${b.channel_id}/unsubscribe`));
      seen.v.delete(b.channel_id);
      await env.publish(o, b.channel_id, "5");
      await drain();
      expect(seen.v.has(b.channel_id)).toBe(false);
      expect(seen.u.get(b.channel_id)).toBe(2);
      const sv = await agree(v, "v");
      expect(sv.channels.map((c: any) => c.channel_id)).toEqual([a.channel_id]);
      expect(sv.total_unread).toBe(3);
      expect((await agree(u, "u")).total_unread).toBe(2);
    });

    test("publish returns before the pushes: the answer does not wait for the fan-out", async () => {
      const o = await env.user();
      const c = await env.channel(o);
      const u = await env.user();
      payloadOf(await env.call(u, "POST", `/api/v1/channel/${c.channel_id}/subscribe`));
      const ws = await env.socket(u);
      const before = env.node.channels.fanout.counters.events;
      await env.publish(o, c.channel_id);
      // The event is queued, not yet processed, when the answer has arrived… then it goes out.
      await ws.nextAction("channel_unread_count");
      expect(env.node.channels.fanout.counters.events).toBeGreaterThan(before);
    });
  });
}

describe("channels: features and throttle", () => {
  test("feature matrix: channel off refuses every route; sub-features off refuse theirs", async () => {
    const env = await channelEnv("pglite", { features: JSON.stringify({ channel_discover: false, channel_order: false, channel_invitation: false }) });
    try {
      const o = await env.user();
      const c = await env.channel(o, "public_paid");
      expect(await env.code(o, "GET", "/api/v1/channels/discover")).toBe(973);
      expect(await env.code(o, "POST", `/api/v1/channel/${c.channel_id}/order`)).toBe(973);
      expect(await env.code(o, "GET", "/api/v1/channel/orders/my")).toBe(973);
      expect(await env.code(o, "POST", `/api/v1/channel/${c.channel_id}/invitation`, { invitee_uid: o.id })).toBe(973);
      expect(await env.code(o, "GET", "/api/v1/channel/invitations/my")).toBe(973);
      expect(await env.code(o, "GET", "/api/v1/channels/search?keyword=news")).toBe(0);
    } finally {
      await env.stop();
    }
    const off = await channelEnv("pglite", { features: JSON.stringify({ channel: false }) });
    try {
      const o = await off.user();
      expect(await off.code(o, "POST", "/api/v1/channel/create", { name: "x", visibility: 0, access_type: 0, join_policy: 0 })).toBe(973);
      expect(await off.code(o, "GET", "/api/v1/channels/unread/summary")).toBe(973);
      expect(await off.code(undefined, "GET", "/api/v1/channels/unread/summary")).toBe(401);
    } finally {
      await off.stop();
    }
  });

  test("per-user throttle: writes past the budget answer 429, other users unaffected", async () => {
    const env = await channelEnv("pglite", { throttleOff: false, channelWritesPerMin: 3, channelReadsPerMin: 2 });
    try {
      const o = await env.user();
      const other = await env.user();
      const c = await env.channel(o);
      await env.publish(o, c.channel_id);
      await env.publish(o, c.channel_id);
      expect(await env.code(o, "POST", `/api/v1/channel/${c.channel_id}/message`, { content: "x", msg_type: "text" })).toBe(429);
      expect(await env.code(other, "POST", `/api/v1/channel/${c.channel_id}/subscribe`)).toBe(0);
      expect(await env.code(o, "GET", "/api/v1/channels/search?keyword=a")).toBe(0);
      expect(await env.code(o, "GET", "/api/v1/channels/search?keyword=a")).toBe(0);
      expect(await env.code(o, "GET", "/api/v1/channels/search?keyword=a")).toBe(429);
    } finally {
      await env.stop();
    }
  });

  test("payments: no provider (production's default, here `none`) refuses pay (971); the order stays created", async () => {
    // Which setting yields no provider in which mode is table-tested in test/domain/channels/access.test.ts.
    const env = await channelEnv("pglite", { channelPaymentProvider: "none" });
    try {
      const o = await env.user();
      const b = await env.user();
      const c = await env.channel(o, "public_paid");
      const order = payloadOf(await env.call(b, "POST", `/api/v1/channel/${c.channel_id}/order`));
      expect(await env.code(b, "POST", "/api/v1/channel/order/pay", { order_no: order.order_no })).toBe(971);
      expect(payloadOf(await env.call(b, "GET", `/api/v1/channel/order/${order.order_no}`)).status).toBe("created");
    } finally {
      await env.stop();
    }
  });
});
