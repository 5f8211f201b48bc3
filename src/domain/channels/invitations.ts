import { and, desc, eq, gt, sql } from "drizzle-orm";
import { channelInvitations, channels, users } from "../../db/schema/index.ts";
import { fail, ok, type Result } from "../errors.ts";
import { decide } from "./access.ts";
import { subscribe } from "./channels.ts";
import { featureOn, guard, loadWithRelation, type ChannelContext } from "./context.ts";
import { invitationJson, invitationStatus } from "./json.ts";

type InvitationRow = typeof channelInvitations.$inferSelect;
const LIST_MAX = 200;

/**
 * Invitations: pending → accepted | rejected | expired. Only the invitee
 * answers. Accepting a free channel's invitation subscribes; on a paid
 * channel it is the context that authorises the purchase (docs/channels.md).
 */
export class ChannelInvitationService {
  constructor(private readonly ctx: ChannelContext) {}

  async create(me: bigint, channelId: bigint, inviteeId: bigint): Promise<Result<ReturnType<typeof invitationJson>>> {
    const on = featureOn(this.ctx, "channel_invitation");
    if (!on.ok) return on;
    const g = await guard(this.ctx, me, channelId, "invite");
    if (!g.ok) return g;
    if (inviteeId === me) return fail("bad_request", "invitee_uid: cannot invite yourself");
    const [u] = await this.ctx.db.select({ id: users.id }).from(users).where(and(eq(users.id, inviteeId), sql`${users.deletedAt} is null`));
    if (!u) return fail("user_not_found", "user not found");
    const now = this.ctx.now();
    const [pending] = await this.ctx.db
      .select()
      .from(channelInvitations)
      .where(
        and(
          eq(channelInvitations.channelId, channelId),
          eq(channelInvitations.inviteeId, inviteeId),
          eq(channelInvitations.status, "pending"),
          gt(channelInvitations.expiresAt, now),
        ),
      );
    if (pending) return ok(invitationJson(pending, now));
    const [row] = await this.ctx.db
      .insert(channelInvitations)
      .values({ id: this.ctx.ids.next(), channelId, inviterId: me, inviteeId, createdAt: now, expiresAt: now + this.ctx.invitationTtlMs })
      .returning();
    return ok(invitationJson(row!, now));
  }

  async #mine(me: bigint, invitationId: bigint): Promise<Result<InvitationRow>> {
    const on = featureOn(this.ctx, "channel_invitation");
    if (!on.ok) return on;
    const [i] = await this.ctx.db.select().from(channelInvitations).where(eq(channelInvitations.id, invitationId));
    if (!i) return fail("invitation_not_found", "invitation not found");
    if (i.inviteeId !== me) return fail("forbidden", "only the invitee may answer this invitation");
    if (invitationStatus(i, this.ctx.now()) !== "pending") return fail("invitation_not_pending", `invitation is ${invitationStatus(i, this.ctx.now())}`);
    return ok(i);
  }

  /** Flips pending → `to` unless it changed meanwhile (a concurrent answer, or it expired). */
  async #answer(i: InvitationRow, to: "accepted" | "rejected"): Promise<boolean> {
    const now = this.ctx.now();
    const done = await this.ctx.db
      .update(channelInvitations)
      .set({ status: to, respondedAt: now })
      .where(and(eq(channelInvitations.id, i.id), eq(channelInvitations.status, "pending"), gt(channelInvitations.expiresAt, now)))
      .returning({ id: channelInvitations.id });
    return done.length > 0;
  }

  async accept(me: bigint, invitationId: bigint): Promise<Result<object>> {
    const i = await this.#mine(me, invitationId);
    if (!i.ok) return i;
    const g = await loadWithRelation(this.ctx, me, i.value.channelId);
    const rel = g && { ...g.rel, invited: true };
    // Fail closed: a channel whose tuple is outside §2.6 cannot be joined, even by invitation.
    if (!g || !rel || decide(g.channel, rel, "see") !== "allow") return fail("channel_not_found", "channel not found");
    if (!(await this.#answer(i.value, "accepted"))) return fail("invitation_not_pending", "invitation is no longer pending");
    // A free channel's invitation is a subscription; a paid one's authorises the purchase.
    if (g.channel.accessType === 0 && decide(g.channel, rel, "subscribe") === "allow") await subscribe(this.ctx, me, g.channel.id);
    return ok({});
  }

  async reject(me: bigint, invitationId: bigint): Promise<Result<object>> {
    const i = await this.#mine(me, invitationId);
    if (!i.ok) return i;
    if (!(await this.#answer(i.value, "rejected"))) return fail("invitation_not_pending", "invitation is no longer pending");
    return ok({});
  }

  /** Invitations to the caller (as invitee, `mine`) or from it (as inviter), newest first, at most 200. */
  async list(me: bigint, side: "mine" | "sent") {
    const on = featureOn(this.ctx, "channel_invitation");
    if (!on.ok) return on;
    const rows = await this.ctx.db
      .select({ i: channelInvitations, name: channels.name, avatar: channels.avatar })
      .from(channelInvitations)
      .innerJoin(channels, and(eq(channels.id, channelInvitations.channelId), sql`${channels.deletedAt} is null`))
      .where(side === "mine" ? eq(channelInvitations.inviteeId, me) : eq(channelInvitations.inviterId, me))
      .orderBy(desc(channelInvitations.id))
      .limit(LIST_MAX);
    const now = this.ctx.now();
    return ok({ list: rows.map((r) => ({ ...invitationJson(r.i, now), channel_name: r.name, channel_avatar: r.avatar })) });
  }
}
