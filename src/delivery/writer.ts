/**
 * Store first, in groups: messages, their inbox rows and the sending device's
 * mark go to the database in one statement per batch (docs/delivery.md).
 * A message's promise settles only after its batch committed, so a
 * SERVER_ACK sent on it names a durable row.
 */
import { and, eq, or, sql } from "drizzle-orm";
import type { Store } from "../db/store.ts";
import { messages } from "../db/schema/index.ts";
import { GroupCommit, type QueueBounds } from "./group-commit.ts";
import { metrics } from "../metrics/index.ts";

export type MessageRow = typeof messages.$inferInsert;

export interface MarkRow {
  readonly userId: bigint;
  readonly deviceId: string;
  readonly messageId: bigint;
}

export interface StoreItem {
  readonly row: MessageRow & { id: bigint; serverTs: number };
  /** Users whose inbox gets the message (receiver(s) and the sender). */
  readonly inbox: readonly bigint[];
  /** Devices that already have it (the sending device; the excepted device of a notice). */
  readonly marks: readonly { userId: bigint; deviceId: string }[];
}

export interface Stored {
  readonly serverId: bigint;
  readonly serverTs: number;
  /** The sender had already sent this id: acknowledged again, not stored or delivered twice. */
  readonly duplicate: boolean;
}

/*
 * The two hot statements have a fixed text: one bind parameter per column,
 * each an array (`unnest`), whatever the batch size. A multi-row VALUES list of
 * 512 messages cost ~30 ms to build in drizzle alone; a fixed text is prepared
 * once per connection (Store.query) and planned once. Ids travel as decimal
 * strings inside the arrays: exact on both drivers.
 */

/** Delivery marks (the ledger batches them: src/delivery/marks.ts). */
const INSERT_MARKS = `insert into delivery_mark (user_id, device_id, message_id)
  select * from unnest($1::bigint[], $2::text[], $3::bigint[]) on conflict do nothing`;

export function writeMarks(store: Store, marks: readonly MarkRow[]): Promise<unknown> {
  if (!marks.length) return Promise.resolve();
  const users = new Array<string>(marks.length);
  const devices = new Array<string>(marks.length);
  const ids = new Array<string>(marks.length);
  marks.forEach((m, i) => {
    users[i] = m.userId.toString();
    devices[i] = m.deviceId;
    ids[i] = m.messageId.toString();
  });
  return store.query(INSERT_MARKS, [users, devices, ids]);
}

const dec = (v: bigint | null | undefined) => (v === null || v === undefined ? null : v.toString());

const senderKey = (from: bigint | null | undefined, clientId: string) => `${from ?? 0n}:${clientId}`;

/**
 * One statement per batch (an implicit transaction, one round trip): the
 * messages go in with ON CONFLICT DO NOTHING, and only the rows that were
 * inserted (the CTE's RETURNING) get their inbox rows and sender marks, so a
 * resent id adds nothing. Five round trips (BEGIN, three INSERTs, COMMIT)
 * were most of a batch's latency on a busy PostgreSQL.
 */
const INSERT_BATCH = `with m as (
  insert into messages (id, client_id, chat_type, from_id, to_id, msg_type, action, payload, e2ee, created_at, server_ts)
  select * from unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::text[],
    $8::text[], $9::text[], $10::text[], $11::bigint[])
  on conflict do nothing returning id
), b as (
  insert into inbox (user_id, message_id)
  select u, mid from unnest($12::bigint[], $13::bigint[]) as x(u, mid)
  where mid in (select id from m) on conflict do nothing
), k as (
  insert into delivery_mark (user_id, device_id, message_id)
  select u, d, mid from unnest($14::bigint[], $15::text[], $16::bigint[]) as y(u, d, mid)
  where mid in (select id from m) on conflict do nothing
)
select id from m`;

function batchParams(unique: readonly StoreItem[]): unknown[] {
  const rows = unique.map((i) => i.row);
  const boxUsers: string[] = [];
  const boxIds: string[] = [];
  const markUsers: string[] = [];
  const markDevices: string[] = [];
  const markIds: string[] = [];
  for (const item of unique) {
    const id = item.row.id.toString();
    for (const u of item.inbox) {
      boxUsers.push(u.toString());
      boxIds.push(id);
    }
    for (const m of item.marks) {
      markUsers.push(m.userId.toString());
      markDevices.push(m.deviceId);
      markIds.push(id);
    }
  }
  return [
    rows.map((r) => dec(r.id)),
    rows.map((r) => r.clientId),
    rows.map((r) => r.chatType),
    rows.map((r) => dec(r.fromId)),
    rows.map((r) => dec(r.toId)),
    rows.map((r) => r.msgType ?? ""),
    rows.map((r) => r.action ?? ""),
    rows.map((r) => r.payload),
    rows.map((r) => r.e2ee ?? null),
    rows.map((r) => r.createdAt ?? null),
    rows.map((r) => String(r.serverTs)),
    boxUsers,
    boxIds,
    markUsers,
    markDevices,
    markIds,
  ];
}

async function writeMessages(store: Store, items: StoreItem[]): Promise<(Stored | ServerIdTaken)[]> {
  const db = store.db;
  // The first of equal (sender, client id) pairs in one batch is the one stored.
  const firstOf = new Map<string, number>();
  const keys = items.map((item) => senderKey(item.row.fromId, item.row.clientId));
  const unique: StoreItem[] = [];
  items.forEach((item, i) => {
    const key = keys[i]!;
    if (!firstOf.has(key)) {
      firstOf.set(key, i);
      unique.push(item);
    }
  });
  const returned = await store.query<{ id: bigint | string }>(INSERT_BATCH, batchParams(unique));
  const inserted = new Set(returned.map((r) => BigInt(r.id)));
  // Resent ids (rare): the stored row's server id and time, read after the insert committed.
  const existing = new Map<string, { id: bigint; serverTs: number }>();
  const dups = unique.filter((i) => !inserted.has(i.row.id));
  if (dups.length) {
    const found = await db
      .select({ id: messages.id, fromId: messages.fromId, clientId: messages.clientId, serverTs: messages.serverTs })
      .from(messages)
      .where(or(...dups.map((d) => and(sql`coalesce(${messages.fromId}, 0) = ${d.row.fromId ?? 0n}`, eq(messages.clientId, d.row.clientId)))));
    for (const f of found) existing.set(senderKey(f.fromId, f.clientId), { id: f.id, serverTs: f.serverTs });
  }
  return items.map((item, i) => {
    const key = keys[i]!;
    const first = firstOf.get(key)!;
    if (first === i && inserted.has(item.row.id)) return { serverId: item.row.id, serverTs: item.row.serverTs, duplicate: false };
    const prior = existing.get(key);
    if (prior) return { serverId: prior.id, serverTs: prior.serverTs, duplicate: true };
    // Repeated inside this batch: the first one was just stored.
    const firstItem = items[first]!;
    if (first !== i && inserted.has(firstItem.row.id)) return { serverId: firstItem.row.id, serverTs: firstItem.row.serverTs, duplicate: true };
    // Neither stored nor a resend: its server id was already taken (two nodes minting with one node id).
    // Never acknowledged as stored: the caller is refused and the sender may send it again.
    return ID_TAKEN;
  });
}

/** A message whose server id collided with a stored one (the per-item failure of a batch). */
export class ServerIdTaken extends Error {
  constructor() {
    super("server id already taken: is a node id used by two nodes? (docs/cluster.md)");
  }
}
const ID_TAKEN = new ServerIdTaken();

/** What a queued message holds in memory, about (its stored texts). */
const itemBytes = (i: StoreItem): number => i.row.payload.length + (i.row.e2ee?.length ?? 0);

/** The node's message queue: messages with their inbox rows and sender marks, group-committed, bounded. */
export class DeliveryWriter {
  readonly messages: GroupCommit<StoreItem, Stored, ServerIdTaken>;

  constructor(store: Store, maxBatch: number, bounds: Omit<QueueBounds<StoreItem>, "sizeOf"> = { maxItems: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER }) {
    // Two message batches in flight on PostgreSQL: the second overlaps the first's commit (settled in order).
    this.messages = new GroupCommit<StoreItem, Stored, ServerIdTaken>(metrics.timed((items: StoreItem[]) => writeMessages(store, items)), maxBatch, store.kind === "postgres" ? 2 : 1, {
      ...bounds,
      sizeOf: itemBytes,
    });
  }

  flush(): Promise<void> {
    return this.messages.flush();
  }
}
