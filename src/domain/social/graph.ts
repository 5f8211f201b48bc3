import type { ImMessage, SocialGraph } from "../../delivery/ports.ts";
import { fail, ok, type Result } from "../errors.ts";
import { AI_ASSISTANT } from "./assistants.ts";
import type { GroupFacts, Relation, SocialFacts, UserFacts } from "./facts.ts";
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
    const needsRelation = this.#needsRelation(from, to, opts, sender, recipient);
    return this.#c2c(from, to, opts, sender, recipient, needsRelation ? await this.facts.relation(from, to) : undefined);
  }

  /** checkC2C's answer from the cache alone; undefined when a fact it needs is not cached (ask checkC2C). */
  checkC2CNow(from: bigint, to: bigint, opts: { readonly encrypted: boolean }): Result<void> | undefined {
    const sender = this.facts.userNow(from);
    const recipient = this.facts.userNow(to);
    if (sender === undefined || recipient === undefined) return undefined;
    const needsRelation = this.#needsRelation(from, to, opts, sender, recipient);
    const rel = needsRelation ? this.facts.relationNow(from, to) : undefined;
    if (needsRelation && rel === undefined) return undefined;
    return this.#c2c(from, to, opts, sender, recipient, rel);
  }

  /** Whether the rule gets as far as the pair's relation (both users exist, no assistant refusal, not a note to oneself). */
  #needsRelation(from: bigint, to: bigint, opts: { readonly encrypted: boolean }, sender: UserFacts | null, recipient: UserFacts | null): boolean {
    return !!sender && !!recipient && from !== to && !this.#assistantRefusal(sender, recipient, opts);
  }

  #assistantRefusal(sender: UserFacts, recipient: UserFacts, opts: { readonly encrypted: boolean }): boolean {
    return opts.encrypted && (sender.accountType === AI_ASSISTANT || recipient.accountType === AI_ASSISTANT);
  }

  /** The rule itself, over facts already at hand (`rel` is read only past the checks that need none). */
  #c2c(from: bigint, to: bigint, opts: { readonly encrypted: boolean }, sender: UserFacts | null, recipient: UserFacts | null, rel: Relation | undefined): Result<void> {
    if (!recipient || !sender) return fail("user_not_found", "user not found");
    if (this.#assistantRefusal(sender, recipient, opts)) {
      return fail("permission_denied", "AI assistants are never part of end-to-end encrypted conversations");
    }
    if (from === to) return OK;
    if (rel!.denied) return fail("in_denylist", "the recipient does not accept your messages");
    if (rel!.friend || this.allowStrangers() || sender.accountType !== 0 || recipient.accountType !== 0) return OK;
    return fail("not_a_friend", "you are not friends with this user");
  }

  async groupMembers(userId: bigint, groupId: bigint, opts?: { readonly fresh?: boolean }): Promise<Result<readonly bigint[]>> {
    return this.#members(userId, await this.facts.group(groupId, opts?.fresh === true));
  }

  /** groupMembers' answer from the cache alone; undefined when the group is not cached. */
  groupMembersNow(userId: bigint, groupId: bigint): Result<readonly bigint[]> | undefined {
    const group = this.facts.groupNow(groupId);
    return group === undefined ? undefined : this.#members(userId, group);
  }

  #members(userId: bigint, group: GroupFacts | null): Result<readonly bigint[]> {
    if (!group) return fail("not_found", "group not found");
    if (!group.roles.has(userId)) return fail("not_group_member", "not a member of this group");
    return ok(group.ids);
  }

  friendsOf(userId: bigint): Promise<readonly bigint[]> {
    return this.facts.friendsOf(userId);
  }

  friendsOfNow(userId: bigint): readonly bigint[] | undefined {
    return this.facts.friendsNow(userId);
  }

  async afterGroupMessage(msg: ImMessage, groupId: bigint, serverId: bigint): Promise<void> {
    await this.mentions.record(msg, groupId, serverId);
  }
}
