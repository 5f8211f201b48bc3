/**
 * The authorisation matrix of §4.3, generated from the route table
 * (src/http/routes/channel.ts): every route × the four §2.6 tuples and one
 * invalid tuple × every kind of caller, each cell on a fresh channel fixture,
 * against the expected allow/deny below. A route added to the table without
 * a row here fails the suite.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { channelRouteTable } from "../../src/http/routes/channel.ts";
import { storeKinds } from "../support/stores.ts";
import { channelEnv, type ChannelEnv, type TestUser } from "./channel.support.ts";

const TUPLES = { "0/0/0": [0, 0, 0], "1/0/1": [1, 0, 1], "0/1/3": [0, 1, 3], "1/1/3": [1, 1, 3], "1/1/1": [1, 1, 1] } as const;
type TupleKey = keyof typeof TUPLES;
const ACTORS = ["anonymous", "outsider", "subscriber", "purchaser", "invitee", "admin1", "admin2", "admin3", "creator"] as const;
type Actor = (typeof ACTORS)[number];

/** A: allowed (past authorisation) · D: denied (401, 403, 964, 965, 966). One string per tuple, ACTORS in order. */
const ALL = "DAAAAAAAA";
const everywhere = (row: string): string[] => [row, row, row, row, row];
const READ = ["DAAAAAAAA", "DDADDAAAA", "DDAADAAAA", "DDDADAAAA", "DDDDDDDDD"];
const MANAGE_2 = everywhere("DDDDDAADA"); // creator, roles 1–2
const MANAGE_3 = everywhere("DDDDDAAAA"); // creator, roles 1–3
const MANAGE_1 = everywhere("DDDDDADDA"); // creator, role 1
const INVITEE_ONLY = everywhere("DDDDADDDD");

//                                                                         0/0/0        1/0/1        0/1/3        1/1/3        1/1/1
const EXPECTED: Record<string, string[]> = {
  "POST /api/v1/channel/create": everywhere(ALL),
  "GET /api/v1/channels/subscribed": everywhere(ALL),
  "GET /api/v1/channels/managed": everywhere(ALL),
  "GET /api/v1/channels/unread/summary": everywhere(ALL),
  "GET /api/v1/channels/search": everywhere(ALL),
  "GET /api/v1/channels/discover": everywhere(ALL),
  "POST /api/v1/channel/invitation/accept": ["DDDDADDDD", "DDDDADDDD", "DDDDADDDD", "DDDDADDDD", "DDDDDDDDD"],
  "POST /api/v1/channel/invitation/reject": INVITEE_ONLY,
  "GET /api/v1/channel/invitations/my": everywhere(ALL),
  "GET /api/v1/channel/invitations/sent": everywhere(ALL),
  "POST /api/v1/channel/order/pay": ["DDDDDDDDD", "DDDDDDDDD", "DDDDADDDD", "DDDDADDDD", "DDDDDDDDD"],
  "POST /api/v1/channel/order/cancel": INVITEE_ONLY,
  "GET /api/v1/channel/orders/my": everywhere(ALL),
  "GET /api/v1/channel/order/:order_no": INVITEE_ONLY,
  "GET /api/v1/channel/by_custom_id/:custom_id": ["DAAAAAAAA", "DDAAAAAAA", "DAAAAAAAA", "DDAAAAAAA", "DDDDDAAAA"],
  "GET /api/v1/channel/:channel_id": ["DAAAAAAAA", "DDAAAAAAA", "DAAAAAAAA", "DDAAAAAAA", "DDDDDAAAA"],
  "PUT /api/v1/channel/:channel_id/update": MANAGE_2,
  "POST /api/v1/channel/:channel_id/delete": everywhere("DDDDDDDDA"),
  "POST /api/v1/channel/:channel_id/subscribe": ["DAAAAAAAA", "DDADAAAAA", "DDAADAAAA", "DDAADAAAA", "DDDDDDDDD"],
  "POST /api/v1/channel/:channel_id/unsubscribe": everywhere(ALL),
  "POST /api/v1/channel/:channel_id/message": MANAGE_3,
  "GET /api/v1/channel/:channel_id/messages": READ,
  "POST /api/v1/channel/:channel_id/read": READ,
  "POST /api/v1/channel/:channel_id/admin": MANAGE_1,
  "DELETE /api/v1/channel/:channel_id/admin/:user_id": MANAGE_1,
  "PUT /api/v1/channel/:channel_id/admin/:user_id/role": MANAGE_1,
  "GET /api/v1/channel/:channel_id/admins": ["DAAAAAAAA", "DDADDAAAA", "DDAADAAAA", "DDDADAAAA", "DDDDDAAAA"],
  "GET /api/v1/channel/:channel_id/subscribers": MANAGE_2,
  "DELETE /api/v1/channel/:channel_id/subscriber/:user_id": MANAGE_2,
  "GET /api/v1/channel/:channel_id/stats": MANAGE_3,
  "GET /api/v1/channel/:channel_id/stats/daily": MANAGE_3,
  "POST /api/v1/channel/:channel_id/message/:message_id/view": READ,
  "POST /api/v1/channel/:channel_id/message/:message_id/reaction": READ,
  "DELETE /api/v1/channel/:channel_id/message/:message_id/reaction/:reaction_type": READ,
  "PUT /api/v1/channel/:channel_id/message/:message_id/edit": MANAGE_2,
  "POST /api/v1/channel/:channel_id/message/:message_id/revoke": MANAGE_2,
  "POST /api/v1/channel/:channel_id/invitation": MANAGE_2,
  "POST /api/v1/channel/:channel_id/order": ["DDDDDDDDD", "DDDDDDDDD", "DAAAAAAAA", "DDDDADDDD", "DDDDDDDDD"],
};

const DENIED = new Set([401, 403, 964, 965, 966]);
/** Business answers that come after the authorisation passed (e.g. "already purchased"). */
const PAST_AUTH = new Set([0, 409]);

interface Fixture {
  channelId: bigint;
  customId: string;
  messageId: bigint;
  invitationId: bigint;
  orderNo: string;
}

for (const kind of storeKinds()) {
  describe(`channel authorisation matrix [${kind}]`, () => {
    let env: ChannelEnv;
    const users = {} as Record<Exclude<Actor, "anonymous"> | "spare" | "targetAdmin" | "targetSub", TestUser>;
    let cell = 0;
    beforeAll(async () => {
      env = await channelEnv(kind);
      for (const name of ["outsider", "subscriber", "purchaser", "invitee", "admin1", "admin2", "admin3", "creator", "spare", "targetAdmin", "targetSub"] as const) {
        users[name] = await env.user(name);
      }
    });
    afterAll(() => env.stop());

    /** One channel of `tuple` with every relation of the matrix, in one statement. */
    async function fixture(tuple: TupleKey): Promise<Fixture> {
      const [v, a, j] = TUPLES[tuple];
      const { ids } = env.node.services;
      const f: Fixture = {
        channelId: ids.next(),
        customId: `m${kind}${++cell}`,
        messageId: ids.next(),
        invitationId: ids.next(),
        orderNo: `CO${ids.next()}`,
      };
      const now = Date.now();
      const u = users;
      await env.node.services.store.rows(sql`with
        c as (insert into channel (id, owner_id, name, custom_id, visibility, access_type, join_policy, price, last_seq, subscriber_count, created_at, updated_at)
              values (${f.channelId}, ${u.creator.id}, 'matrix', ${f.customId}, ${v}, ${a}, ${j}, 100, 1, 2, ${now}, ${now})),
        m as (insert into channel_message (id, channel_id, seq, author_id, msg_type, content, created_at)
              values (${f.messageId}, ${f.channelId}, 1, ${u.creator.id}, 'text', 'secret', ${now})),
        s as (insert into channel_subscription (channel_id, user_id, read_seq, subscribed_at)
              values (${f.channelId}, ${u.subscriber.id}, 0, ${now}), (${f.channelId}, ${u.targetSub.id}, 0, ${now})),
        ad as (insert into channel_admin (channel_id, user_id, role, created_at)
              values (${f.channelId}, ${u.admin1.id}, 1, ${now}), (${f.channelId}, ${u.admin2.id}, 2, ${now}),
                     (${f.channelId}, ${u.admin3.id}, 3, ${now}), (${f.channelId}, ${u.targetAdmin.id}, 3, ${now})),
        o as (insert into channel_order (order_no, channel_id, user_id, amount, currency, status, created_at, paid_at)
              values (${`P${f.orderNo}`}, ${f.channelId}, ${u.purchaser.id}, 100, 'CNY', 'paid', ${now}, ${now}),
                     (${f.orderNo}, ${f.channelId}, ${u.invitee.id}, 100, 'CNY', 'created', ${now}, null)),
        i as (insert into channel_invitation (id, channel_id, inviter_id, invitee_id, status, created_at, expires_at)
              values (${f.invitationId}, ${f.channelId}, ${u.creator.id}, ${u.invitee.id}, 'pending', ${now}, ${now + 3_600_000}))
        select 1 as done`);
      return f;
    }

    /** The concrete request of a route for one fixture: path parameters filled, a valid body. */
    function request(path: string, f: Fixture): { path: string; body: Record<string, unknown> } {
      const filled = path
        .replace(":channel_id", String(f.channelId))
        .replace(":message_id", String(f.messageId))
        .replace(":order_no", f.orderNo)
        .replace(":custom_id", f.customId)
        .replace(":reaction_type", "like")
        .replace(":user_id", String(path.includes("/subscriber/") ? users.targetSub.id : users.targetAdmin.id));
      const body: Record<string, unknown> = {
        name: "n",
        visibility: 0,
        access_type: 0,
        join_policy: 0,
        content: "c",
        msg_type: "text",
        message_id: f.messageId,
        invitation_id: f.invitationId,
        order_no: f.orderNo,
        user_id: users.spare.id,
        invitee_uid: users.spare.id,
        role: path.endsWith("/role") ? 2 : 3,
        reaction_type: "like",
      };
      const query = path.startsWith("/api/v1/channels/search") ? "?keyword=matrix" : "";
      return { path: filled + query, body };
    }

    test("every route of the table has a row, and every row a route", () => {
      const keys = channelRouteTable(env.node.channels).map((r) => `${r.methods[0]} ${r.path}`);
      expect(keys.sort()).toEqual(Object.keys(EXPECTED).sort());
      expect(keys.filter((k) => !channelRouteTable(env.node.channels).find((r) => `${r.methods[0]} ${r.path}` === k)?.extension)).toHaveLength(35);
    });

    for (const [key, rows] of Object.entries(EXPECTED)) {
      test(key, async () => {
        const [method, path] = key.split(" ") as [string, string];
        const got: string[] = [];
        for (const tuple of Object.keys(TUPLES) as TupleKey[]) {
          let row = "";
          for (const actor of ACTORS) {
            const f = await fixture(tuple);
            const req = request(path, f);
            const res = await env.call(actor === "anonymous" ? undefined : users[actor], method, req.path, method === "GET" ? undefined : req.body);
            const code = res.body?.code ?? res.status;
            row += DENIED.has(code) ? "D" : PAST_AUTH.has(code) ? "A" : `?${code}`;
          }
          got.push(row);
        }
        expect(got).toEqual(rows);
      });
    }
  });
}
