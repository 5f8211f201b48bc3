/**
 * Who may do what on a channel (spec §2.6): one pure function of the access
 * tuple, the caller's relation to the channel and the operation. The four
 * tuples of §2.6 are the only ones that open content; any other or missing
 * tuple is denied (fail closed) except the management operations of the
 * channel's managers (creator, admin roles 1–3). Table-tested in
 * test/domain/channels/access.test.ts; docs/channels.md has the same table.
 */

/** (visibility, access_type, join_policy) as stored; null = missing. */
export interface AccessTuple {
  readonly visibility: number | null;
  readonly accessType: number | null;
  readonly joinPolicy: number | null;
}

export type TupleKind = "public_free" | "private_free" | "public_paid" | "private_paid";

/** The §2.6 tuple a channel has, or undefined for every other (or missing) combination. */
export function tupleKind(t: AccessTuple): TupleKind | undefined {
  const key = `${t.visibility}/${t.accessType}/${t.joinPolicy}`;
  switch (key) {
    case "0/0/0":
      return "public_free";
    case "1/0/1":
      return "private_free";
    case "0/1/3":
      return "public_paid";
    case "1/1/3":
      return "private_paid";
  }
  return undefined;
}

export type AdminRole = 1 | 2 | 3;

export const isAdminRole = (v: unknown): v is AdminRole => v === 1 || v === 2 || v === 3;

/** The caller's relation to one channel, read in one query (src/domain/channels/store.ts). */
export interface Relation {
  readonly creator: boolean;
  readonly role: AdminRole | undefined;
  readonly subscribed: boolean;
  /** Holds a paid order for the channel. */
  readonly purchased: boolean;
  /** Holds an accepted, or a pending unexpired, invitation. */
  readonly invited: boolean;
}

export const STRANGER: Relation = { creator: false, role: undefined, subscribed: false, purchased: false, invited: false };

/** Content and membership operations: decided by the tuple. */
export type ContentOp =
  /** The channel object (get, search results for a private channel). */
  | "see"
  /** List messages, mark read, record view, add and remove reaction (§4.3). */
  | "read"
  | "subscribe"
  /** Create or pay an order. */
  | "purchase";

/** Management operations: decided by the manager's rank, whatever the tuple. */
export type ManageOp =
  | "update"
  | "delete"
  | "manage_admins"
  | "manage_subscribers"
  | "list_admins"
  | "stats"
  | "publish"
  /** Edit or revoke any message (role 3 edits and revokes only its own). */
  | "edit_any"
  | "invite";

export type ChannelOp = ContentOp | ManageOp;

/** Allowed, or refused as "channel not found" (the caller may not even see it) or "access denied". */
export type Decision = "allow" | "hidden" | "denied";

/** Rank 0 is the creator; admin roles 1–3 follow; undefined: not a manager. */
function rank(rel: Relation): number | undefined {
  return rel.creator ? 0 : rel.role;
}

/** Lowest rank allowed to manage (0 creator, 1–3 admin roles). */
const MANAGE: Record<ManageOp, number> = {
  delete: 0,
  manage_admins: 1,
  update: 2,
  manage_subscribers: 2,
  invite: 2,
  edit_any: 2,
  publish: 3,
  stats: 3,
  list_admins: 3,
};

function content(kind: TupleKind, rel: Relation, op: ContentOp): boolean {
  const manager = rank(rel) !== undefined;
  switch (op) {
    case "see":
      return kind === "public_free" || kind === "public_paid" || manager || rel.subscribed || rel.purchased || rel.invited;
    case "read":
      switch (kind) {
        case "public_free":
          return true;
        case "private_free":
          return manager || rel.subscribed;
        case "public_paid":
          return manager || rel.subscribed || rel.purchased;
        case "private_paid":
          // A subscription alone is not enough: it needs the invitation or purchase that authorises it.
          return manager || rel.purchased || (rel.subscribed && rel.invited);
      }
      break;
    case "subscribe":
      if (rel.subscribed) return true; // a no-op
      switch (kind) {
        case "public_free":
          return true;
        case "private_free":
          return manager || rel.invited;
        case "public_paid":
        case "private_paid":
          return manager || rel.purchased;
      }
      break;
    case "purchase":
      return kind === "public_paid" || (kind === "private_paid" && rel.invited);
  }
  return false;
}

export function decide(tuple: AccessTuple, rel: Relation, op: ChannelOp): Decision {
  const kind = tupleKind(tuple);
  const r = rank(rel);
  const visible = kind !== undefined ? content(kind, rel, "see") : r !== undefined;
  if (!visible) return "hidden";
  // Managers see their channel whatever its tuple (to manage it).
  if (op === "see") return "allow";
  if (op in MANAGE) {
    const need = MANAGE[op as ManageOp];
    // Listing admins is also open to everyone who may read the channel.
    if (op === "list_admins" && kind !== undefined && content(kind, rel, "read")) return "allow";
    return r !== undefined && r <= need ? "allow" : "denied";
  }
  if (kind === undefined) return "denied";
  return content(kind, rel, op as ContentOp) ? "allow" : "denied";
}

/**
 * May the caller give, change or take admin role `role`? The creator: any role.
 * A role-1 admin: roles strictly below its own (2 and 3), so peers cannot demote each other.
 */
export function mayAssign(rel: Relation, role: AdminRole): boolean {
  const r = rank(rel);
  return r === 0 || (r === 1 && role > 1);
}
