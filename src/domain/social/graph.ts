import type { ImMessage, SocialGraph } from "../../delivery/ports.ts";
import { fail, ok, type Result } from "../errors.ts";
import { AI_ASSISTANT } from "./assistants.ts";
import type { SocialFacts } from "./facts.ts";
import type { MentionService } from "./mentions.ts";

const OK: Result<void> = ok(undefined);

/**
 * What delivery asks per message, answered from the fact cache
 * (one database round trip per cold key, none when warm).
 */
export class CachedSocialGraph implements SocialGraph {
  constructor(
    private readonly facts: SocialFacts,
    private readonly mentions: MentionService,
    private readonly allowStrangers: () => boolean,
  ) {}

  /**
   * Order: the recipient exists; no E2EE with an AI assistant (§1);
   * the recipient's denylist; friendship, unless strangers are allowed or one
   * side is an assistant or official bot (they are reached without befriending).
   */
  async checkC2C(from: bigint, to: bigint, opts: { readonly encrypted: boolean }): Promise<Result<void>> {
    const [sender, recipient] = await Promise.all([this.facts.user(from), this.facts.user(to)]);
    if (!recipient || !sender) return fail("user_not_found", "user not found");
    if (opts.encrypted && (sender.accountType === AI_ASSISTANT || recipient.accountType === AI_ASSISTANT)) {
      return fail("permission_denied", "AI assistants are never part of end-to-end encrypted conversations");
    }
    if (from === to) return OK;
    const rel = await this.facts.relation(from, to);
    if (rel.denied) return fail("in_denylist", "the recipient does not accept your messages");
    if (rel.friend || this.allowStrangers() || sender.accountType !== 0 || recipient.accountType !== 0) return OK;
    return fail("not_a_friend", "you are not friends with this user");
  }

  async groupMembers(userId: bigint, groupId: bigint, opts?: { readonly fresh?: boolean }): Promise<Result<readonly bigint[]>> {
    const group = await this.facts.group(groupId, opts?.fresh === true);
    if (!group) return fail("not_found", "group not found");
    if (!group.roles.has(userId)) return fail("not_group_member", "not a member of this group");
    return ok(group.ids);
  }

  friendsOf(userId: bigint): Promise<readonly bigint[]> {
    return this.facts.friendsOf(userId);
  }

  async afterGroupMessage(msg: ImMessage, groupId: bigint, serverId: bigint): Promise<void> {
    await this.mentions.record(msg, groupId, serverId);
  }
}
