import { and, desc, eq } from "drizzle-orm";
import { channelOrders } from "../../db/schema/channels.ts";
import { fail, ok, type Result } from "../errors.ts";
import { subscribe } from "./channels.ts";
import { featureOn, guard, type ChannelContext } from "./context.ts";
import { orderJson } from "./json.ts";

type OrderRow = typeof channelOrders.$inferSelect;
type OrderJson = ReturnType<typeof orderJson>;
const LIST_MAX = 200;

/**
 * Orders: created → paid | cancelled. Created by whoever may purchase the
 * channel (access tuple), paid through the payment provider by the buyer
 * only; paying subscribes the buyer. The provider receives the order number
 * as its idempotency key, so a charge repeated by a racing second `pay` is
 * the same charge; the second `pay` itself is refused (order_not_payable).
 */
export class ChannelOrderService {
  constructor(private readonly ctx: ChannelContext) {}

  async create(me: bigint, channelId: bigint): Promise<Result<OrderJson>> {
    const on = featureOn(this.ctx, "channel_order");
    if (!on.ok) return on;
    const g = await guard(this.ctx, me, channelId, "purchase");
    if (!g.ok) return g;
    if (g.value.rel.purchased) return fail("conflict", "already purchased");
    const [open] = await this.ctx.db
      .select()
      .from(channelOrders)
      .where(and(eq(channelOrders.userId, me), eq(channelOrders.channelId, channelId), eq(channelOrders.status, "created")));
    if (open) return ok(orderJson(open));
    const { price, currency } = g.value.channel;
    const [row] = await this.ctx.db
      .insert(channelOrders)
      .values({ orderNo: `CO${this.ctx.ids.next()}`, channelId, userId: me, amount: price, currency, createdAt: this.ctx.now() })
      .returning();
    return ok(orderJson(row!));
  }

  /** The caller's order; someone else's is not found (an order number is not a key). */
  async #mine(me: bigint, orderNo: string): Promise<Result<OrderRow>> {
    const on = featureOn(this.ctx, "channel_order");
    if (!on.ok) return on;
    const [o] = await this.ctx.db.select().from(channelOrders).where(eq(channelOrders.orderNo, orderNo));
    return o && o.userId === me ? ok(o) : fail("order_not_found", "order not found");
  }

  async #payable(me: bigint, orderNo: string): Promise<Result<OrderRow>> {
    const o = await this.#mine(me, orderNo);
    if (!o.ok) return o;
    if (o.value.status !== "created") return fail("order_not_payable", `order already ${o.value.status}`);
    return o;
  }

  async pay(me: bigint, orderNo: string): Promise<Result<OrderJson>> {
    const o = await this.#payable(me, orderNo);
    if (!o.ok) return o;
    const g = await guard(this.ctx, me, o.value.channelId, "purchase");
    if (!g.ok) return g;
    const provider = this.ctx.payments;
    if (!provider) return fail("payment_unavailable", "no payment provider is configured");
    const { channelId, amount, currency } = o.value;
    const charged = await provider.charge({ orderNo, userId: me, channelId, amount, currency });
    if (!charged.ok) return charged;
    const [paid] = await this.ctx.db
      .update(channelOrders)
      .set({ status: "paid", provider: provider.name, transactionId: charged.value, paidAt: this.ctx.now() })
      .where(and(eq(channelOrders.orderNo, orderNo), eq(channelOrders.status, "created")))
      .returning();
    if (!paid) return fail("order_not_payable", "order already paid or cancelled");
    await subscribe(this.ctx, me, channelId);
    return ok(orderJson(paid));
  }

  async cancel(me: bigint, orderNo: string): Promise<Result<OrderJson>> {
    const o = await this.#payable(me, orderNo);
    if (!o.ok) return o;
    const [row] = await this.ctx.db
      .update(channelOrders)
      .set({ status: "cancelled", cancelledAt: this.ctx.now() })
      .where(and(eq(channelOrders.orderNo, orderNo), eq(channelOrders.status, "created")))
      .returning();
    return row ? ok(orderJson(row)) : fail("order_not_payable", "order already paid or cancelled");
  }

  async detail(me: bigint, orderNo: string): Promise<Result<OrderJson>> {
    const o = await this.#mine(me, orderNo);
    return o.ok ? ok(orderJson(o.value)) : o;
  }

  async mine(me: bigint) {
    const on = featureOn(this.ctx, "channel_order");
    if (!on.ok) return on;
    const rows = await this.ctx.db.select().from(channelOrders).where(eq(channelOrders.userId, me)).orderBy(desc(channelOrders.createdAt)).limit(LIST_MAX);
    return ok({ list: rows.map(orderJson) });
  }
}
