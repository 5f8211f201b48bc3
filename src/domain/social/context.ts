import type { Config } from "../../config/index.ts";
import type { Db, Store } from "../../db/store.ts";
import type { DeviceAddress, Notifier } from "../../delivery/ports.ts";
import type { IdGenerator } from "../../ids/tsid.ts";
import type { Logger } from "../../log.ts";
import { fail, ok, type Result } from "../errors.ts";
import type { GroupFacts, SocialFacts } from "./facts.ts";
import type { GroupRole } from "./rules.ts";

/** What every social service holds: storage, ids, clock, the notifier and the shared fact cache. */
export interface SocialContext {
  readonly store: Store;
  readonly db: Db;
  readonly ids: IdGenerator;
  readonly now: () => number;
  readonly config: Pick<Config, "allowStrangers" | "groupSelfJoin">;
  readonly log: Logger;
  readonly notifier: Notifier;
  readonly facts: SocialFacts;
}

/** Emits an S2C and never lets a notifier failure undo a committed change (it is logged). */
export async function emit(
  ctx: Pick<SocialContext, "notifier" | "log">,
  userIds: Iterable<bigint>,
  action: string,
  payload: Record<string, unknown>,
  opts?: { readonly exceptDevice?: DeviceAddress },
): Promise<void> {
  try {
    await ctx.notifier.notify(userIds, action, payload, opts);
  } catch (err) {
    ctx.log.error("notify failed", { action, err });
  }
}

/** A live group the caller is a member of, read fresh (REST authorisation): not_found / not_group_member otherwise. */
export async function membership(ctx: SocialContext, me: bigint, gid: bigint): Promise<Result<GroupFacts & { role: GroupRole }>> {
  const group = await ctx.facts.group(gid, true);
  if (!group) return fail("not_found", "group not found");
  const role = group.roles.get(me);
  return role ? ok({ ...group, role }) : fail("not_group_member", "not a member of this group");
}
