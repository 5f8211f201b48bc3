/**
 * Reads of the inbox/marks design (docs/delivery.md): a device's pending set
 * is its user's inbox at or above the device floor, minus the device's marks.
 */
import { and, asc, desc, eq, getTableColumns, inArray, lt, sql, type SQL } from "drizzle-orm";
import { BatchLoader } from "../db/batch-load.ts";
import type { Store } from "../db/store.ts";
import { deliveryDevices, deliveryMarks, inbox, messages, userDevices } from "../db/schema/index.ts";
import { ID_EPOCH_MS, idFloorForTime } from "../ids/tsid.ts";

// No floor recorded: nothing is pending (every device is given one when first seen).
const NO_FLOOR = (1n << 63n) - 1n;
// idFloorForTime in SQL: ms since the id epoch, shifted past node and sequence bits.
const SHIFT = 22;
import type { ChatType } from "./ports.ts";

export type MessageRecord = typeof messages.$inferSelect;

/** One page of messages; `more` when a message follows the last one (cut by rows or by bytes). */
export interface MessagePage {
  readonly rows: MessageRecord[];
  readonly more: boolean;
}

/**
 * Columns that cut a page by bytes as well as rows (docs/delivery.md "Pages"):
 * the running sum of the stored text in the page's order is computed in SQL,
 * so rows past `budget` never leave the database. The first row always fits
 * (a message larger than the budget comes alone); `more` is whether a row
 * follows (a window function sees the row after the LIMIT).
 */
function budgetColumns(order: SQL, budget: number) {
  const w = sql`over (order by ${order})`;
  const size = sql`octet_length(${messages.payload}) + coalesce(octet_length(${messages.e2ee}), 0)`;
  return {
    ...getTableColumns(messages),
    fits: sql<boolean>`(row_number() ${w} = 1 or sum(${size}) ${w} <= ${budget})`.as("fits"),
    more: sql<boolean>`(lead(${messages.id}) ${w} is not null)`.as("more"),
  };
}

/** The rows that fit (`fits` only ever turns false once, the sum grows): more follow when the last one has a next. */
function pageOf(rows: (MessageRecord & { fits: boolean; more: boolean })[]): MessagePage {
  const more = rows.at(-1)?.more === true;
  return { rows: rows.map(({ fits: _f, more: _m, ...row }) => row), more };
}

/**
 * Messages the device has not acknowledged: the inbox from the floor up, no
 * mark, none of `exclude` (acknowledged marks not committed yet, src/delivery/marks.ts).
 */
function pendingWhere(userId: bigint, deviceId: string, exclude: readonly bigint[] = []): SQL {
  const skip = exclude.length
    ? sql` and not (${inbox.messageId} = any(${sql.param(exclude.map(String))}::bigint[]))`
    : sql``;
  return sql`${inbox.userId} = ${userId}
    and ${inbox.messageId} >= coalesce((select ${deliveryDevices.floorId} from ${deliveryDevices}
      where ${deliveryDevices.userId} = ${userId} and ${deliveryDevices.deviceId} = ${deviceId}), ${NO_FLOOR})
    and not exists (select 1 from ${deliveryMarks} where ${deliveryMarks.userId} = ${userId}
      and ${deliveryMarks.deviceId} = ${deviceId} and ${deliveryMarks.messageId} = ${inbox.messageId})${skip}`;
}

/** What a connecting device learns (InboxReader.openDevice). */
export interface DeviceOpen {
  /** user_device status; undefined when the device is not registered there. */
  readonly status: number | undefined;
  /** Whether its pending set is not empty (always false for a retired device). */
  readonly pending: boolean;
}

interface OpenRequest {
  readonly userId: bigint;
  readonly deviceId: string;
  readonly fresh: bigint;
}

const NOT_OPENED: DeviceOpen = { status: undefined, pending: false };

// Devices per openDevice statement (three array parameters, whatever the count).
const OPEN_BATCH_MAX = 500;

/** A PostgreSQL array literal of quoted elements (one text parameter, one statement text for any length). */
function arrayLiteral(items: readonly string[]): string {
  return `{${items.map((s) => `"${s.replace(/[\\"]/g, "\\$&")}"`).join(",")}}`;
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
   * floor recorded as `ensureDevice` does and whether it has pending messages.
   * Connects arriving while one statement runs share the next (one statement
   * for many devices, one commit: a reconnect storm is a few round trips).
   */
  openDevice(userId: bigint, deviceId: string, fresh: bigint): Promise<DeviceOpen> {
    const key = `${userId}:${deviceId}`;
    if (!this.#openArgs.has(key)) this.#openArgs.set(key, { userId, deviceId, fresh });
    return this.#opens.load(key);
  }

  /** What each waiting key stands for (the first caller's `fresh`). */
  readonly #openArgs = new Map<string, OpenRequest>();
  readonly #opens = new BatchLoader<string, DeviceOpen>(
    async (keys) => {
      const reqs = keys.map((k) => {
        const r = this.#openArgs.get(k)!;
        this.#openArgs.delete(k);
        return r;
      });
      const out = await this.#openDevices(reqs);
      return new Map(keys.map((k, i) => [k, out[i]!]));
    },
    NOT_OPENED,
    OPEN_BATCH_MAX,
  );

  /**
   * One statement for `reqs` (distinct devices): a floor inserted by a
   * concurrent statement is not visible to this snapshot, so the floor
   * computed here stands in (the same value, or a fresher one).
   */
  async #openDevices(reqs: readonly OpenRequest[]): Promise<DeviceOpen[]> {
    const users = arrayLiteral(reqs.map((r) => r.userId.toString()));
    const devices = arrayLiteral(reqs.map((r) => r.deviceId));
    const fresh = arrayLiteral(reqs.map((r) => r.fresh.toString()));
    const rows = await this.store.rows<{ ord: number | bigint | string; status: number | null; pending: boolean }>(sql`with
      req as (select * from unnest(${users}::bigint[], ${devices}::text[], ${fresh}::bigint[])
        with ordinality as r(user_id, device_id, fresh, ord)),
      dev as (select r.ord, r.user_id, r.device_id, d.status,
          coalesce((d.created_at - ${ID_EPOCH_MS}) << ${sql.raw(String(SHIFT))}, r.fresh) as computed,
          coalesce(d.status not in (0, -1), true) as ok
        from req r left join ${userDevices} d on d.user_id = r.user_id and d.device_id = r.device_id),
      known as (select dev.ord, k.floor_id from dev
        join ${deliveryDevices} k on k.user_id = dev.user_id and k.device_id = dev.device_id),
      ins as (insert into ${deliveryDevices} (user_id, device_id, floor_id)
        select dev.user_id, dev.device_id, dev.computed from dev
        where dev.ok and not exists (select 1 from known where known.ord = dev.ord)
        on conflict do nothing)
      select dev.ord, dev.status, dev.ok and exists (select 1 from ${inbox} i
          where i.user_id = dev.user_id
            and i.message_id >= coalesce((select floor_id from known where known.ord = dev.ord), dev.computed)
            and not exists (select 1 from ${deliveryMarks} m where m.user_id = dev.user_id
              and m.device_id = dev.device_id and m.message_id = i.message_id)) as pending
      from dev`);
    const out: DeviceOpen[] = new Array(reqs.length);
    for (const r of rows) out[Number(r.ord) - 1] = { status: r.status == null ? undefined : Number(r.status), pending: r.pending === true };
    return out;
  }

  async hasPending(userId: bigint, deviceId: string, exclude?: readonly bigint[]): Promise<boolean> {
    const rows = await this.store.db.select({ one: sql`1` }).from(inbox).where(pendingWhere(userId, deviceId, exclude)).limit(1);
    return rows.length > 0;
  }

  /** Oldest first: at most `limit` messages and about `budget` bytes of stored text. */
  async pending(userId: bigint, deviceId: string, limit: number, exclude?: readonly bigint[], budget = Number.MAX_SAFE_INTEGER): Promise<MessagePage> {
    const page = this.store.db
      .select(budgetColumns(sql`${inbox.messageId}`, budget))
      .from(inbox)
      .innerJoin(messages, eq(messages.id, inbox.messageId))
      .where(pendingWhere(userId, deviceId, exclude))
      .orderBy(inbox.messageId)
      .limit(limit)
      .as("page");
    return pageOf(await this.store.db.select().from(page).where(sql`${page.fits}`).orderBy(asc(page.id)));
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

  /** Newest first, below `beforeId` when given: at most `limit` messages and about `budget` bytes of stored text. */
  async history(where: SQL, beforeId: bigint | undefined, limit: number, budget = Number.MAX_SAFE_INTEGER): Promise<MessagePage> {
    const page = this.store.db
      .select(budgetColumns(sql`${messages.id} desc`, budget))
      .from(messages)
      .where(beforeId === undefined ? where : and(where, lt(messages.id, beforeId)))
      .orderBy(desc(messages.id))
      .limit(limit)
      .as("page");
    return pageOf(await this.store.db.select().from(page).where(sql`${page.fits}`).orderBy(desc(page.id)));
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
