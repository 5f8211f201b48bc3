/**
 * Channels (spec §4.3; docs/channels.md). The route table below is data:
 * test/http/channel-matrix.test.ts generates its authorisation matrix from
 * it. Parameter resolution: the path parameter wins; body or query is only
 * the fallback (`param`).
 */
import { Hono, type Context } from "hono";
import { z } from "zod";
import type { Channels } from "../../domain/channels/index.ts";
import { MAX_STAT_DAYS } from "../../domain/channels/stats.ts";
import { fail, unwrap, type FailureKind, type Result } from "../../domain/errors.ts";
import { toId } from "../../ids/tsid.ts";
import { stringifyJson } from "../../protocol/json.ts";
import type { Services } from "../../services.ts";
import { currentUser, requireUser, type AppEnv } from "../auth.ts";
import { ok } from "../envelope.ts";
import { failureResponse } from "../errors.ts";
import { input } from "../params.ts";
import { schema, valid } from "../openapi.ts";
import { perUserThrottle } from "../throttle.ts";
import { integerOf, zAsSent, zInt } from "../zod.ts";

const noNul = (s: string) => !s.includes("\u0000");
const text = (min: number, max: number) => z.string().trim().min(min).max(max).refine(noNul, "must not contain NUL");
const tags = z.array(text(1, 32)).max(16);
const edit = {
  description: text(0, 2000).optional(),
  avatar: text(0, 1024).optional(),
  tags: tags.optional(),
  price: zInt.pipe(z.number().min(0).max(1_000_000_000)).optional(),
  currency: z.string().regex(/^[A-Z]{3}$/, "must be a 3-letter currency code").optional(),
};
const createBody = z.object({
  name: text(1, 100),
  visibility: zInt,
  access_type: zInt,
  join_policy: zInt,
  custom_id: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "1–64 of A-Z a-z 0-9 _ . -").optional(),
  ...edit,
});
const updateBody = z.object({ name: text(1, 100).optional(), ...edit });
const messageBody = z.object({
  content: z.string().max(65_536).refine(noNul, "must not contain NUL"),
  msg_type: text(1, 32),
  payload: z.record(z.string(), z.unknown()).optional(),
  request_id: text(1, 128).optional(),
});
const editBody = z.object({
  content: z.string().max(65_536).refine(noNul, "must not contain NUL"),
  msg_type: text(1, 32).optional(),
  payload: z.record(z.string(), z.unknown()).optional(),
});
const reactionType = text(1, 32);
const keyword = z.object({ keyword: text(1, 64) });
const category = z.object({ category: text(1, 32).optional() });

const LIMIT_DEFAULT = 20;
const LIMIT_MAX = 100;

// Declared inputs (§4.3): a path parameter wins; the same name in the body or query is only the fallback (`param`).
const fromPath = (what: string) => zAsSent(`${what}; the path parameter wins, body or query is the fallback`);
const CHANNEL = { channel_id: fromPath("64-bit channel id (required)") };
const MESSAGE = { message_id: fromPath("64-bit message id (required; or msg_id)"), msg_id: zAsSent("alias of message_id") };
const USER = { user_id: fromPath("64-bit user id (required; or uid)"), uid: zAsSent("alias of user_id") };
const PAGE = { cursor: zAsSent("exclusive cursor"), limit: zAsSent(`default ${LIMIT_DEFAULT}, at most ${LIMIT_MAX}`) };
const ROLE = zAsSent("integer 1–3 (required)");
const Reaction = z.object({ reaction_type: reactionType.default("like") });
const Invitation = z.object({ invitation_id: zAsSent("64-bit id (required)") });
const NO_INPUT = z.object({});
const Order = z.object({ order_no: fromPath("order number (required)") });

/** `limit`: default 20, at most 100; anything unreadable ("0x5", true) is the default. */
export function limitOf(p: Record<string, unknown>): number {
  const n = integerOf(p.limit);
  return n !== undefined && n >= 1 ? Math.min(n, LIMIT_MAX) : LIMIT_DEFAULT;
}

/** The path parameter, else the body/query value (compatibility fallback, §4.3). */
function param(c: Context, p: Record<string, unknown>, key: string, ...aliases: string[]): unknown {
  const fromPath = c.req.param(key);
  if (fromPath !== undefined && fromPath !== "") return fromPath;
  for (const k of [key, ...aliases]) if (p[k] !== undefined && p[k] !== null && p[k] !== "") return p[k];
  return undefined;
}

/** A required id: `empty` (the §7.3 business code) when absent, 400 when not an id. */
function idParam(c: Context, p: Record<string, unknown>, key: string, empty: FailureKind, emptyMsg: string, ...aliases: string[]): bigint {
  const v = param(c, p, key, ...aliases);
  if (v === undefined) return unwrap(fail(empty, emptyMsg));
  const id = toId(v);
  return id ?? unwrap(fail("bad_request", `${key}: must be a 64-bit id (integer or decimal string)`));
}

const channelIdOf = (c: Context, p: Record<string, unknown>) => idParam(c, p, "channel_id", "channel_id_empty", "channel id empty");
const userIdOf = (c: Context, p: Record<string, unknown>, ...aliases: string[]) =>
  idParam(c, p, "user_id", "user_id_empty", "user id empty", "uid", ...aliases);
const messageIdOf = (c: Context, p: Record<string, unknown>) =>
  idParam(c, p, "message_id", "bad_request", "message_id is required", "msg_id");

function orderNoOf(c: Context, p: Record<string, unknown>): string {
  const v = param(c, p, "order_no");
  if (v === undefined) return unwrap(fail("order_no_empty", "order number empty"));
  if (typeof v !== "string" || v.length > 64 || !noNul(v)) return unwrap(fail("bad_request", "order_no: must be an order number"));
  return v;
}

/** The cursor id (exclusive): absent → from the start. */
function cursorId(p: Record<string, unknown>): bigint {
  if (p.cursor === undefined || p.cursor === "" || p.cursor === null) return 0n;
  return toId(p.cursor) ?? unwrap(fail("bad_request", "cursor: must be an id"));
}

/** The role: present, an integer 1–3, else the §7.3 "role must be between 1 and 3". */
function roleOf(p: Record<string, unknown>): number {
  return integerOf(p.role) ?? unwrap(fail("channel_role_invalid", "role must be between 1 and 3"));
}

const json = (v: Record<string, unknown> | undefined) => (v === undefined ? undefined : stringifyJson(v));

type Handler = (c: Context<AppEnv>, me: bigint, p: Record<string, unknown>) => Result<unknown> | Promise<Result<unknown>>;

/** One §4.3 row (or a documented extension): how the matrix calls it, and the throttle class. */
export interface ChannelRoute {
  readonly methods: readonly ("GET" | "POST" | "PUT" | "DELETE")[];
  readonly path: string;
  /** Stores or fans out work: the per-user write budget; views, reactions, reads and search: the read budget. */
  readonly throttle?: "write" | "read";
  readonly extension?: boolean;
  readonly summary: string;
  /** What the handler reads (it sees only these keys, as validated); none: the handler reads nothing. */
  readonly input?: z.ZodType<Record<string, unknown>>;
  readonly handler: Handler;
}

export function channelRouteTable(ch: Channels): readonly ChannelRoute[] {
  const { channels, messages, members, invitations, orders, stats } = ch;
  return [
    // Static paths first: a parameter segment must not swallow them.
    {
      methods: ["POST"],
      path: "/api/v1/channel/create",
      summary: "Create a channel",
      input: createBody,
      throttle: "write",
      handler: async (c, me) => {
        const b = valid(c, createBody);
        return channels.create(me, {
          name: b.name,
          visibility: b.visibility,
          accessType: b.access_type,
          joinPolicy: b.join_policy,
          ...(b.description !== undefined ? { description: b.description } : {}),
          ...(b.avatar !== undefined ? { avatar: b.avatar } : {}),
          ...(b.custom_id !== undefined ? { customId: b.custom_id } : {}),
          ...(b.tags !== undefined ? { tags: b.tags } : {}),
          ...(b.price !== undefined ? { price: b.price } : {}),
          ...(b.currency !== undefined ? { currency: b.currency } : {}),
        });
      },
    },
    { methods: ["GET"], path: "/api/v1/channels/subscribed", summary: "Channels I subscribe to, by cursor", input: z.object(PAGE), handler: (_c, me, p) => channels.subscribed(me, cursorId(p), limitOf(p)) },
    { methods: ["GET"], path: "/api/v1/channels/managed", summary: "Channels I own or administer", handler: (_c, me) => channels.managed(me) },
    { methods: ["GET"], path: "/api/v1/channels/unread/summary", summary: "Unread counts of my channels", handler: (_c, me) => channels.unreadSummary(me) },
    {
      methods: ["GET"],
      path: "/api/v1/channels/search",
      summary: "Search channels by keyword",
      input: keyword.extend({ limit: PAGE.limit }),
      throttle: "read",
      handler: (c, me, p) => channels.search(me, valid(c, keyword).keyword, limitOf(p)),
    },
    {
      methods: ["GET"],
      path: "/api/v1/channels/discover",
      summary: "Discover channels, by category",
      input: category.extend({ limit: PAGE.limit }),
      throttle: "read",
      handler: (c, me, p) => channels.discover(me, valid(c, category).category, limitOf(p)),
    },
    {
      methods: ["POST"],
      path: "/api/v1/channel/invitation/accept",
      summary: "Accept a channel invitation",
      input: Invitation,
      throttle: "write",
      handler: (c, me, p) => invitations.accept(me, idParam(c, p, "invitation_id", "bad_request", "invitation_id is required")),
    },
    {
      methods: ["POST"],
      path: "/api/v1/channel/invitation/reject",
      summary: "Reject a channel invitation",
      input: Invitation,
      throttle: "write",
      handler: (c, me, p) => invitations.reject(me, idParam(c, p, "invitation_id", "bad_request", "invitation_id is required")),
    },
    { methods: ["GET"], path: "/api/v1/channel/invitations/my", summary: "Invitations I received", handler: (_c, me) => invitations.list(me, "mine") },
    { methods: ["GET"], path: "/api/v1/channel/invitations/sent", summary: "Invitations I sent", handler: (_c, me) => invitations.list(me, "sent") },
    { methods: ["POST"], path: "/api/v1/channel/order/pay", summary: "Pay a channel order", input: Order, throttle: "write", handler: (c, me, p) => orders.pay(me, orderNoOf(c, p)) },
    {
      methods: ["POST"],
      path: "/api/v1/channel/order/cancel",
      summary: "Cancel a channel order",
      input: Order,
      throttle: "write",
      extension: true,
      handler: (c, me, p) => orders.cancel(me, orderNoOf(c, p)),
    },
    { methods: ["GET"], path: "/api/v1/channel/orders/my", summary: "My channel orders", handler: (_c, me) => orders.mine(me) },
    { methods: ["GET"], path: "/api/v1/channel/order/:order_no", summary: "One of my channel orders", input: Order, handler: (c, me, p) => orders.detail(me, orderNoOf(c, p)) },
    {
      methods: ["GET"],
      path: "/api/v1/channel/by_custom_id/:custom_id",
      summary: "A channel by its custom id",
      input: z.object({ custom_id: fromPath("1–64 of A-Z a-z 0-9 _ . -") }),
      handler: (c, me, p) => {
        const v = param(c, p, "custom_id");
        if (typeof v !== "string" || !/^[A-Za-z0-9_.-]{1,64}$/.test(v)) return fail("bad_request", "custom_id: 1–64 of A-Z a-z 0-9 _ . -");
        return channels.getByCustomId(me, v);
      },
    },
    // One channel.
    { methods: ["GET"], path: "/api/v1/channel/:channel_id", summary: "One channel", input: z.object(CHANNEL), handler: (c, me, p) => channels.get(me, channelIdOf(c, p)) },
    {
      methods: ["PUT", "POST"],
      path: "/api/v1/channel/:channel_id/update",
      summary: "Edit a channel",
      input: updateBody.extend(CHANNEL),
      throttle: "write",
      handler: (c, me, p) => {
        const b = valid(c, updateBody);
        return channels.update(me, channelIdOf(c, p), {
          ...(b.name !== undefined ? { name: b.name } : {}),
          ...(b.description !== undefined ? { description: b.description } : {}),
          ...(b.avatar !== undefined ? { avatar: b.avatar } : {}),
          ...(b.tags !== undefined ? { tags: b.tags } : {}),
          ...(b.price !== undefined ? { price: b.price } : {}),
          ...(b.currency !== undefined ? { currency: b.currency } : {}),
        });
      },
    },
    { methods: ["POST"], path: "/api/v1/channel/:channel_id/delete", summary: "Delete a channel (owner)", input: z.object(CHANNEL), throttle: "write", handler: (c, me, p) => channels.delete(me, channelIdOf(c, p)) },
    { methods: ["POST"], path: "/api/v1/channel/:channel_id/subscribe", summary: "Subscribe to a channel", input: z.object(CHANNEL), throttle: "write", handler: (c, me, p) => channels.subscribe(me, channelIdOf(c, p)) },
    {
      methods: ["POST"],
      path: "/api/v1/channel/:channel_id/unsubscribe",
      summary: "Unsubscribe from a channel",
      input: z.object(CHANNEL),
      throttle: "write",
      handler: (c, me, p) => channels.unsubscribe(me, channelIdOf(c, p)),
    },
    {
      methods: ["POST"],
      path: "/api/v1/channel/:channel_id/message",
      summary: "Publish a channel message",
      input: messageBody.extend(CHANNEL),
      throttle: "write",
      handler: (c, me, p) => {
        const b = valid(c, messageBody);
        return messages.publish(me, channelIdOf(c, p), {
          content: b.content,
          msgType: b.msg_type,
          ...(b.payload !== undefined ? { payload: json(b.payload) } : {}),
          ...(b.request_id !== undefined ? { requestId: b.request_id } : {}),
        });
      },
    },
    {
      methods: ["GET"],
      path: "/api/v1/channel/:channel_id/messages",
      summary: "A channel's messages, by seq cursor",
      input: z.object({ ...CHANNEL, ...PAGE }),
      handler: (c, me, p) => {
        const seq = p.cursor === undefined || p.cursor === "" ? undefined : (integerOf(p.cursor) ?? -1);
        if (seq !== undefined && seq < 0) return fail("bad_request", "cursor: must be a message seq");
        return messages.list(me, channelIdOf(c, p), seq, limitOf(p));
      },
    },
    { methods: ["POST"], path: "/api/v1/channel/:channel_id/read", summary: "Mark a channel read up to a message", input: z.object({ ...CHANNEL, ...MESSAGE }), throttle: "read", handler: (c, me, p) => messages.markRead(me, channelIdOf(c, p), messageIdOf(c, p)) },
    {
      methods: ["POST"],
      path: "/api/v1/channel/:channel_id/admin",
      summary: "Add a channel admin",
      input: z.object({ ...CHANNEL, ...USER, role: ROLE }),
      throttle: "write",
      handler: (c, me, p) => members.addAdmin(me, channelIdOf(c, p), userIdOf(c, p), roleOf(p)),
    },
    {
      methods: ["DELETE"],
      path: "/api/v1/channel/:channel_id/admin/:user_id",
      summary: "Remove a channel admin",
      input: z.object({ ...CHANNEL, ...USER }),
      throttle: "write",
      handler: (c, me, p) => members.removeAdmin(me, channelIdOf(c, p), userIdOf(c, p)),
    },
    {
      methods: ["PUT"],
      path: "/api/v1/channel/:channel_id/admin/:user_id/role",
      summary: "Change a channel admin's role",
      input: z.object({ ...CHANNEL, ...USER, role: ROLE }),
      throttle: "write",
      handler: (c, me, p) => members.updateRole(me, channelIdOf(c, p), userIdOf(c, p), roleOf(p)),
    },
    { methods: ["GET"], path: "/api/v1/channel/:channel_id/admins", summary: "A channel's admins", input: z.object(CHANNEL), handler: (c, me, p) => members.admins(me, channelIdOf(c, p)) },
    {
      methods: ["GET"],
      path: "/api/v1/channel/:channel_id/subscribers",
      summary: "A channel's subscribers, by cursor",
      input: z.object({ ...CHANNEL, ...PAGE }),
      handler: (c, me, p) => members.subscribers(me, channelIdOf(c, p), cursorId(p), limitOf(p)),
    },
    {
      methods: ["DELETE"],
      path: "/api/v1/channel/:channel_id/subscriber/:user_id",
      summary: "Remove a subscriber",
      input: z.object({ ...CHANNEL, ...USER }),
      throttle: "write",
      handler: (c, me, p) => members.removeSubscriber(me, channelIdOf(c, p), userIdOf(c, p)),
    },
    { methods: ["GET"], path: "/api/v1/channel/:channel_id/stats", summary: "A channel's totals", input: z.object(CHANNEL), handler: (c, me, p) => stats.stats(me, channelIdOf(c, p)) },
    {
      methods: ["GET"],
      path: "/api/v1/channel/:channel_id/stats/daily",
      summary: "A channel's daily figures",
      input: z.object({ ...CHANNEL, days: zAsSent(`default 7, at most ${MAX_STAT_DAYS}`) }),
      handler: (c, me, p) => {
        const n = p.days === undefined || p.days === "" ? 7 : integerOf(p.days);
        if (n === undefined || n < 1) return fail("bad_request", `days: must be an integer 1–${MAX_STAT_DAYS}`);
        return stats.daily(me, channelIdOf(c, p), Math.min(n, MAX_STAT_DAYS));
      },
    },
    {
      methods: ["POST"],
      path: "/api/v1/channel/:channel_id/message/:message_id/view",
      summary: "Count a message view",
      input: z.object({ ...CHANNEL, ...MESSAGE }),
      throttle: "read",
      handler: (c, me, p) => messages.view(me, channelIdOf(c, p), messageIdOf(c, p)),
    },
    {
      methods: ["POST"],
      path: "/api/v1/channel/:channel_id/message/:message_id/reaction",
      summary: "React to a message",
      input: z.object({ ...CHANNEL, ...MESSAGE, reaction_type: Reaction.shape.reaction_type }),
      throttle: "read",
      handler: (c, me, p) =>
        messages.react(me, channelIdOf(c, p), messageIdOf(c, p), valid(c, Reaction).reaction_type),
    },
    {
      methods: ["DELETE"],
      path: "/api/v1/channel/:channel_id/message/:message_id/reaction/:reaction_type",
      summary: "Remove my reaction",
      input: z.object({ ...CHANNEL, ...MESSAGE, reaction_type: fromPath("the reaction") }),
      throttle: "read",
      handler: (c, me, p) =>
        messages.unreact(me, channelIdOf(c, p), messageIdOf(c, p), input(reactionType, param(c, p, "reaction_type") ?? "")),
    },
    {
      methods: ["PUT", "POST"],
      path: "/api/v1/channel/:channel_id/message/:message_id/edit",
      summary: "Edit a channel message",
      input: editBody.extend({ ...CHANNEL, ...MESSAGE }),
      throttle: "write",
      extension: true,
      handler: (c, me, p) => {
        const b = valid(c, editBody);
        return messages.edit(me, channelIdOf(c, p), messageIdOf(c, p), {
          content: b.content,
          ...(b.msg_type !== undefined ? { msgType: b.msg_type } : {}),
          ...(b.payload !== undefined ? { payload: json(b.payload) } : {}),
        });
      },
    },
    {
      methods: ["POST"],
      path: "/api/v1/channel/:channel_id/message/:message_id/revoke",
      summary: "Revoke a channel message",
      input: z.object({ ...CHANNEL, ...MESSAGE }),
      throttle: "write",
      extension: true,
      handler: (c, me, p) => messages.revoke(me, channelIdOf(c, p), messageIdOf(c, p)),
    },
    {
      methods: ["POST"],
      path: "/api/v1/channel/:channel_id/invitation",
      summary: "Invite a user to a channel",
      input: z.object({ ...CHANNEL, invitee_uid: fromPath("64-bit user id (or invitee_user_id / user_id / uid)"), invitee_user_id: zAsSent("alias"), ...USER }),
      throttle: "write",
      handler: (c, me, p) =>
        invitations.create(me, channelIdOf(c, p), idParam(c, p, "invitee_uid", "user_id_empty", "user id empty", "invitee_user_id", "user_id", "uid")),
    },
    { methods: ["POST"], path: "/api/v1/channel/:channel_id/order", summary: "Order a paid channel", input: z.object(CHANNEL), throttle: "write", handler: (c, me, p) => orders.create(me, channelIdOf(c, p)) },
  ];
}

/** The §4.3 routes: a token, the `channel` feature, then the per-user throttle of the route's class. */
export function channelRoutes(services: Services, ch: Channels, table = channelRouteTable(ch)): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const features = ch.features;
  for (const prefix of ["/api/v1/channel/*", "/api/v1/channels/*"]) {
    app.use(prefix, requireUser(services));
    app.use(prefix, async (c, next) => {
      if (!features.channel) return failureResponse(c, { kind: "feature_disabled", msg: "feature channel is disabled" });
      await next();
    });
  }
  const budgets = {
    write: perUserThrottle(services, services.config.channelWritesPerMin, "channel changes"),
    read: perUserThrottle(services, services.config.channelReadsPerMin, "channel reads"),
  };
  for (const route of table) {
    // Input-less routes still pass query and body through params(c): a NUL character there stays a 400.
    const declared = route.input ?? NO_INPUT;
    const answer = async (c: Context<AppEnv>) => ok(c, unwrap(await route.handler(c, currentUser(c).userId, valid(c, declared))));
    const declare = schema({ summary: route.summary, params: declared });
    if (route.throttle) app.on([...route.methods], [route.path], budgets[route.throttle], declare, answer);
    else app.on([...route.methods], [route.path], declare, answer);
  }
  return app;
}
