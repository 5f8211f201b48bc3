import type { Services } from "../../services.ts";
import { featuresFromConfig, type FeatureMatrix } from "../features/matrix.ts";
import { ChannelService } from "./channels.ts";
import type { ChannelContext } from "./context.ts";
import { ChannelFanout, type ChannelEvent, type LocalPush } from "./fanout.ts";
import { ChannelInvitationService } from "./invitations.ts";
import { ChannelMemberService } from "./members.ts";
import { ChannelMessageService } from "./messages.ts";
import { ChannelOrderService } from "./orders.ts";
import { paymentProvider, type PaymentProvider } from "./payments.ts";
import { ChannelStatsService } from "./stats.ts";

export { ChannelFanout, UNREAD_ACTION, type ChannelEvent, type LocalPush } from "./fanout.ts";
export { devProvider, type PaymentProvider } from "./payments.ts";

/** The channel area of one node (docs/channels.md). */
export interface Channels {
  readonly channels: ChannelService;
  readonly messages: ChannelMessageService;
  readonly members: ChannelMemberService;
  readonly invitations: ChannelInvitationService;
  readonly orders: ChannelOrderService;
  readonly stats: ChannelStatsService;
  /** The feature matrix (§2.5) the area answers by. */
  readonly features: FeatureMatrix;
  /** This node's pushes (events from any node land here). */
  readonly fanout: ChannelFanout;
}

export interface ChannelDeps {
  /** This node's online users (the transport). */
  readonly local: LocalPush;
  /** Sends an event to the other live nodes (the cluster bus); this node's share is queued here. */
  readonly broadcast: (event: ChannelEvent) => void;
  /** Where a user's devices are: mark read tells only those nodes. Absent: broadcast. */
  readonly nodesOf?: (userId: bigint) => Promise<number[]>;
  /** Sends an event to one node. */
  readonly sendTo?: (node: number, event: ChannelEvent) => void;
  /** Overrides the configured provider (tests). */
  readonly payments?: PaymentProvider;
}

export function createChannels(services: Services, deps: ChannelDeps): Channels {
  const { config, store, log } = services;
  const fanout = new ChannelFanout(store, deps.local, log);
  const features = featuresFromConfig(config.features);
  const announce = (event: ChannelEvent) => {
    fanout.enqueue(event);
    if (event.userIds && deps.nodesOf && deps.sendTo && event.userIds.length === 1) {
      // One user (mark read): only the nodes holding its devices.
      deps.nodesOf(event.userIds[0]!).then(
        (nodes) => {
          for (const n of nodes) if (n !== services.nodeId) deps.sendTo!(n, event);
        },
        (err: unknown) => log.warn("channel push: presence lookup failed", { err }),
      );
      return;
    }
    deps.broadcast(event);
  };
  const ctx: ChannelContext = {
    store,
    db: store.db,
    ids: services.ids,
    now: services.now,
    log,
    features,
    payments: deps.payments ?? paymentProvider(config.channelPaymentProvider, config.env),
    announce,
    invitationTtlMs: config.channelInvitationTtlHours * 3_600_000,
  };
  return {
    channels: new ChannelService(ctx),
    messages: new ChannelMessageService(ctx),
    members: new ChannelMemberService(ctx),
    invitations: new ChannelInvitationService(ctx),
    orders: new ChannelOrderService(ctx),
    stats: new ChannelStatsService(ctx),
    features,
    fanout,
  };
}
