/** Pure rules of the social area: roles, list attributes, conversation merge. No I/O. */

export type GroupRole = "owner" | "manager" | "member";
export const GROUP_ROLES: readonly GroupRole[] = ["owner", "manager", "member"];

export type GroupAction = "read" | "invite" | "admit" | "edit" | "set_role" | "dissolve" | "leave";

/** Who may do what in a group. The owner cannot leave (dissolve instead), so a group always has one. */
const ALLOWED: Record<GroupAction, readonly GroupRole[]> = {
  read: ["owner", "manager", "member"],
  invite: ["owner", "manager", "member"],
  /** Told of requests to join (self-join off); they admit by inviting. */
  admit: ["owner", "manager"],
  edit: ["owner", "manager"],
  set_role: ["owner"],
  dissolve: ["owner"],
  leave: ["manager", "member"],
};

export function isGroupRole(v: unknown): v is GroupRole {
  return typeof v === "string" && (GROUP_ROLES as readonly string[]).includes(v);
}

/** May a member with `role` (undefined: not a member) do `action`? */
export function can(role: GroupRole | undefined, action: GroupAction): boolean {
  return role !== undefined && ALLOWED[action].includes(role);
}

/** GET /group/page `attr`: owner (groups I own), join (groups I joined, not owned), manager; missing/unknown → owner. */
export type GroupAttr = "owner" | "join" | "manager";
export function groupAttr(v: unknown): GroupAttr {
  return v === "join" || v === "manager" ? v : "owner";
}

export type ConversationType = "c2c" | "c2g";
export function conversationType(v: unknown): ConversationType | undefined {
  if (typeof v !== "string") return undefined;
  const t = v.toLowerCase();
  return t === "c2c" || t === "c2g" ? t : undefined;
}

export interface ConversationCandidate {
  readonly conversation_type: ConversationType;
  readonly conversation_id: bigint;
  readonly server_ts: number;
}

export interface ConversationState {
  readonly isPinned: boolean;
  /** Messages at or before this server_ts are deleted for the user. */
  readonly deletedTs: number | null;
}

export const conversationKey = (type: ConversationType, id: bigint): string => `${type}:${id}`;

/**
 * §2.3: one item per conversation, the newest server_ts wins; a conversation
 * whose newest message is covered by its deletion record is left out; with
 * `since`, only conversations strictly newer than it. Pinned first, then newest first.
 */
export function mergeConversations<T extends ConversationCandidate>(
  candidates: Iterable<T>,
  states: ReadonlyMap<string, ConversationState>,
  since?: number,
): (T & { is_pinned: boolean })[] {
  const newest = new Map<string, T>();
  for (const c of candidates) {
    const key = conversationKey(c.conversation_type, c.conversation_id);
    const seen = newest.get(key);
    if (!seen || c.server_ts > seen.server_ts) newest.set(key, c);
  }
  const out: (T & { is_pinned: boolean })[] = [];
  for (const [key, c] of newest) {
    if (since !== undefined && c.server_ts <= since) continue;
    const state = states.get(key);
    if (state?.deletedTs != null && c.server_ts <= state.deletedTs) continue;
    out.push({ ...c, is_pinned: state?.isPinned ?? false });
  }
  return out.sort(
    (a, b) => Number(b.is_pinned) - Number(a.is_pinned) || b.server_ts - a.server_ts ||
      (a.conversation_id < b.conversation_id ? -1 : a.conversation_id > b.conversation_id ? 1 : 0),
  );
}

/** The user ids named by payload.at_uids that are members, without the sender, each once. */
export function mentionTargets(atUids: readonly bigint[], members: { has(id: bigint): boolean }, sender: bigint): bigint[] {
  const out = new Set<bigint>();
  for (const id of atUids) if (id !== sender && members.has(id)) out.add(id);
  return [...out];
}

/** Both user-id keys (§9.4 stage 1: answers carry uid and user_id). */
export const userKeys = (id: bigint) => ({ user_id: id, uid: id });
