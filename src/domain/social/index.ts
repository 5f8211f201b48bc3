import type { Notifier, SocialGraph } from "../../delivery/ports.ts";
import type { Services } from "../../services.ts";
import type { SocialContext } from "./context.ts";
import { ConversationService } from "./conversations.ts";
import { DenylistService } from "./denylist.ts";
import { SocialFacts } from "./facts.ts";
import { FriendService } from "./friends.ts";
import { CachedSocialGraph } from "./graph.ts";
import { GroupService } from "./groups.ts";
import { MentionService } from "./mentions.ts";
import { userKeys } from "./rules.ts";

export { assistantsFromConfig, listAssistants, seedAssistants, type AssistantSpec } from "./assistants.ts";
export type { Invalidation } from "./facts.ts";

/** The social area of one node: the graph delivery asks, and the services the REST routes call. */
export interface Social {
  readonly graph: SocialGraph;
  readonly facts: SocialFacts;
  readonly friends: FriendService;
  readonly denylist: DenylistService;
  readonly groups: GroupService;
  readonly conversations: ConversationService;
  readonly mentions: MentionService;
}

export interface SocialDeps {
  /** S2C emission (apply_friend, apply_friend_confirm, group_member_join/leave, group_dissolve). */
  readonly notifier: Notifier;
}

export function createSocial(services: Services, deps: SocialDeps): Social {
  const { config, store } = services;
  const facts = new SocialFacts(store, { ttlMs: config.socialCacheTtlMs, max: config.socialCacheSize }, services.now);
  const ctx: SocialContext = {
    store,
    db: store.db,
    ids: services.ids,
    now: services.now,
    config,
    log: services.log,
    notifier: deps.notifier,
    facts,
  };
  const mentions = new MentionService(ctx);
  return {
    graph: new CachedSocialGraph(facts, mentions, () => config.allowStrangers),
    facts,
    friends: new FriendService(ctx),
    denylist: new DenylistService(ctx),
    groups: new GroupService(ctx),
    conversations: new ConversationService(ctx),
    mentions,
  };
}

/** Presence payload for online/offline (§6): both id keys. */
export const presencePayload = (userId: bigint): Record<string, unknown> => userKeys(userId);
