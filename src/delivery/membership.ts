/**
 * Membership of conversation timelines as sequence spans (docs/delivery.md
 * "Membership"): a member sees the entries numbered after the head at the
 * moment they joined, up to the head at the moment they left. The social
 * area calls these inside the transaction that changes the member rows.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/store.ts";

const head = (convId: bigint) => sql`coalesce((select last_seq from timeline_head where conv_id = ${convId}), 0)`;
const decimals = (ids: readonly bigint[]) => sql.param(ids.map(String));

/** `userIds` join: they see what is stored from now on. A span closed at this very head is opened again. */
export async function openSpans(db: Db, convId: bigint, userIds: readonly bigint[]): Promise<void> {
  if (!userIds.length) return;
  await db.execute(sql`insert into timeline_member (conv_id, user_id, join_seq)
    select ${convId}, u, ${head(convId)} from unnest(${decimals(userIds)}::bigint[]) as u
    on conflict (conv_id, user_id, join_seq) do update set leave_seq = null`);
}

/** `userIds` (all members when omitted) leave: they see nothing stored from now on. */
export async function closeSpans(db: Db, convId: bigint, userIds?: readonly bigint[]): Promise<void> {
  const who = userIds ? sql` and user_id = any(${decimals(userIds)}::bigint[])` : sql``;
  await db.execute(sql`update timeline_member set leave_seq = ${head(convId)}
    where conv_id = ${convId} and leave_seq is null${who}`);
}
