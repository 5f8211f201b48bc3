/**
 * Reads of the inbox/marks design (docs/delivery.md): a device's pending set
 * is its user's inbox at or above the device floor, minus the device's marks.
 */
import { and, desc, eq, inArray, lt, sql, type SQL } from "drizzle-orm";
import type { Store } from "../db/store.ts";
import { deliveryDevices, deliveryMarks, inbox, messages, userDevices } from "../db/schema/index.ts";
import { ID_EPOCH_MS, idFloorForTime } from "../ids/tsid.ts";

// No floor recorded: nothing is pending (every device is given one when first seen).
const NO_FLOOR = (1n << 63n) - 1n;
// idFloorForTime in SQL: ms since the id epoch, shifted past node and sequence bits.
const SHIFT = 22;
import type { ChatType } from "./ports.ts";

export type MessageRecord = typeof messages.$inferSelect;

/** Messages the device has not acknowledged: the inbox from the floor up, no mark. */
function pendingWhere(userId: bigint, deviceId: string): SQL {
  return sql`${inbox.userId} = ${userId}
    and ${inbox.messageId} >= coalesce((select ${deliveryDevices.floorId} from ${deliveryDevices}
      where ${deliveryDevices.userId} = ${userId} and ${deliveryDevices.deviceId} = ${deviceId}), ${NO_FLOOR})
    and not exists (select 1 from ${deliveryMarks} where ${deliveryMarks.userId} = ${userId}
      and ${deliveryMarks.deviceId} = ${deviceId} and ${deliveryMarks.messageId} = ${inbox.messageId})`;
}

export class InboxReader {
  constructor(private readonly store: Store) {}

  /**
   * Records a device's floor the first time it is seen: its registration time
   * in user_device, else `fresh` (an id minted now: everything stored before
   * it is older). Messages stored before that are not pending for it.
   */
  async ensureDevice(userId: bigint, deviceId: string, fresh: bigint): Promise<void> {
    const floor = fresh;
    await this.store.db.execute(sql`insert into ${deliveryDevices} (user_id, device_id, floor_id)
      select ${userId}, ${deviceId}, coalesce(
        (select (${userDevices.createdAt} - ${ID_EPOCH_MS}) << ${sql.raw(String(SHIFT))} from ${userDevices}
          where ${userDevices.userId} = ${userId} and ${userDevices.deviceId} = ${deviceId}), ${floor})
      on conflict do nothing`);
  }

  /**
   * A device connects: its user_device status and, unless it is retired, its
   * floor recorded as `ensureDevice` does and whether it has pending messages,
   * in one statement (one round trip on the connect path). A floor inserted by
   * a concurrent connect of the same device is not visible to this snapshot:
   * the floor computed here stands in (the same value, or a fresher one).
   */
  async openDevice(userId: bigint, deviceId: string, fresh: bigint): Promise<{ status: number | undefined; pending: boolean }> {
    const [row] = await this.store.rows<{ status: number | null; pending: boolean }>(sql`with
      dev as (select ${userDevices.status} as status, (${userDevices.createdAt} - ${ID_EPOCH_MS}) << ${sql.raw(String(SHIFT))} as floor
        from ${userDevices} where ${userDevices.userId} = ${userId} and ${userDevices.deviceId} = ${deviceId}),
      live as (select coalesce((select status from dev) not in (0, -1), true) as ok),
      known as (select ${deliveryDevices.floorId} as floor from ${deliveryDevices}
        where ${deliveryDevices.userId} = ${userId} and ${deliveryDevices.deviceId} = ${deviceId}),
      computed as (select coalesce((select floor from dev), ${fresh}::bigint) as floor),
      ins as (insert into ${deliveryDevices} (user_id, device_id, floor_id)
        select ${userId}, ${deviceId}, (select floor from computed)
        where (select ok from live) and not exists (select 1 from known)
        on conflict do nothing)
      select (select status from dev) as status, (select ok from live) and exists (select 1 from ${inbox}
        where ${inbox.userId} = ${userId}
          and ${inbox.messageId} >= coalesce((select floor from known), (select floor from computed))
          and not exists (select 1 from ${deliveryMarks} where ${deliveryMarks.userId} = ${userId}
            and ${deliveryMarks.deviceId} = ${deviceId} and ${deliveryMarks.messageId} = ${inbox.messageId})) as pending`);
    return { status: row?.status == null ? undefined : Number(row.status), pending: row?.pending === true };
  }

  async hasPending(userId: bigint, deviceId: string): Promise<boolean> {
    const rows = await this.store.db.select({ one: sql`1` }).from(inbox).where(pendingWhere(userId, deviceId)).limit(1);
    return rows.length > 0;
  }

  /** Oldest first; `limit + 1` rows read so the caller knows has_more. */
  async pending(userId: bigint, deviceId: string, limit: number): Promise<MessageRecord[]> {
    const rows = await this.store.db
      .select({ m: messages })
      .from(inbox)
      .innerJoin(messages, eq(messages.id, inbox.messageId))
      .where(pendingWhere(userId, deviceId))
      .orderBy(inbox.messageId)
      .limit(limit + 1);
    return rows.map((r) => r.m);
  }

  /** Server ids of messages in the user's inbox with these §2.8 ids. */
  async resolve(userId: bigint, ids: readonly string[]): Promise<Map<string, { serverId: bigint; chatType: string }>> {
    const out = new Map<string, { serverId: bigint; chatType: string }>();
    if (!ids.length) return out;
    const rows = await this.store.db
      .select({ id: messages.id, clientId: messages.clientId, chatType: messages.chatType })
      .from(messages)
      .innerJoin(inbox, and(eq(inbox.messageId, messages.id), eq(inbox.userId, userId)))
      .where(inArray(messages.clientId, [...ids]));
    for (const r of rows) out.set(r.clientId, { serverId: r.id, chatType: r.chatType });
    return out;
  }

  /**
   * A frame ACK names only the tsid segment: the message is looked up among the
   * device's pending messages of that direction whose id has that segment, else
   * (a repeated ACK of a message already acknowledged) among the user's inbox.
   */
  async resolveTsid(userId: bigint, deviceId: string, type: ChatType, tsid: string): Promise<{ serverId: bigint; clientId: string } | undefined> {
    const match = and(eq(messages.chatType, type), sql`split_part(${messages.clientId}, '.', 2) = ${tsid}`);
    const find = async (where: SQL | undefined) => {
      const rows = await this.store.db
        .select({ id: messages.id, clientId: messages.clientId })
        .from(inbox)
        .innerJoin(messages, eq(messages.id, inbox.messageId))
        .where(and(where, match))
        .orderBy(inbox.messageId)
        .limit(1);
      return rows[0] ? { serverId: rows[0].id, clientId: rows[0].clientId } : undefined;
    };
    // The pending set is short; the whole inbox is read only for a repeat.
    return (await find(pendingWhere(userId, deviceId))) ?? (await find(eq(inbox.userId, userId)));
  }

  /** Server id of a message of one conversation named by its §2.8 id (history's before_id). */
  async idInConversation(where: SQL, clientId: string): Promise<bigint | undefined> {
    const rows = await this.store.db.select({ id: messages.id }).from(messages).where(and(where, eq(messages.clientId, clientId))).limit(1);
    return rows[0]?.id;
  }

  /** Newest first, below `beforeId` when given; `limit + 1` rows. */
  async history(where: SQL, beforeId: bigint | undefined, limit: number): Promise<MessageRecord[]> {
    return this.store.db
      .select()
      .from(messages)
      .where(beforeId === undefined ? where : and(where, lt(messages.id, beforeId)))
      .orderBy(desc(messages.id))
      .limit(limit + 1);
  }

  /** user_device status of a device; undefined when it is not registered there. */
  async deviceStatus(userId: bigint, deviceId: string): Promise<number | undefined> {
    const rows = await this.store.db
      .select({ status: userDevices.status })
      .from(userDevices)
      .where(and(eq(userDevices.userId, userId), eq(userDevices.deviceId, deviceId)));
    return rows[0]?.status;
  }

  /** Is this device one of the user's registered, usable devices (status not 0 / -1)? */
  async isActiveDevice(userId: bigint, deviceId: string): Promise<boolean> {
    const status = await this.deviceStatus(userId, deviceId);
    return status !== undefined && !isRetired(status);
  }

  /**
   * Compaction: moves each device's floor up to its oldest unacknowledged
   * message, but never past `settledMs` (a message minted before that is
   * committed by now, so none can appear below the floor later), then drops the
   * marks below the floors. Keeps the pending-set scans short.
   */
  async compact(settledMs: number): Promise<void> {
    const safe = idFloorForTime(settledMs);
    await this.store.db.transaction(async (tx) => {
      await tx.execute(sql`update ${deliveryDevices} d set floor_id = least(${safe}, coalesce(
        (select min(i.message_id) from ${inbox} i where i.user_id = d.user_id and i.message_id >= d.floor_id
          and not exists (select 1 from ${deliveryMarks} m where m.user_id = d.user_id and m.device_id = d.device_id
            and m.message_id = i.message_id)), ${safe}))
        where d.floor_id < ${safe}`);
      await tx.execute(sql`delete from ${deliveryMarks} m using ${deliveryDevices} d
        where m.user_id = d.user_id and m.device_id = d.device_id and m.message_id < d.floor_id`);
    });
  }

  /** Deletes messages (with their inbox rows and marks) minted before `beforeMs`; ids are time-ordered. */
  async prune(beforeMs: number): Promise<number> {
    const floor = idFloorForTime(beforeMs);
    return this.store.db.transaction(async (tx) => {
      await tx.delete(deliveryMarks).where(lt(deliveryMarks.messageId, floor));
      await tx.delete(inbox).where(lt(inbox.messageId, floor));
      const gone = await tx.delete(messages).where(lt(messages.id, floor)).returning({ id: messages.id });
      return gone.length;
    });
  }
}

/** The condition selecting one conversation's messages (uses the history indexes). */
export function conversationWhere(chatType: "c2c" | "c2g", userId: bigint, peerId: bigint): SQL {
  if (chatType === "c2g") return and(eq(messages.chatType, "C2G"), eq(messages.toId, peerId))!;
  const [a, b] = userId < peerId ? [userId, peerId] : [peerId, userId];
  return sql`${messages.chatType} = 'C2C' and least(${messages.fromId}, ${messages.toId}) = ${a}
    and greatest(${messages.fromId}, ${messages.toId}) = ${b}`;
}


/** user_device status 0 (revoked) and -1 (destroyed): such a device gets no pushes (§3.1). */
export const isRetired = (status: number | undefined): boolean => status === 0 || status === -1;
