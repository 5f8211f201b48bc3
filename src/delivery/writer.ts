/**
 * Store first, in groups: messages, their inbox rows and the sending device's
 * mark go to the database in one transaction per batch (multi-row INSERTs).
 * A message's promise settles only after its batch committed, so a
 * SERVER_ACK sent on it names a durable row.
 */
import { and, eq, or, sql, type SQL } from "drizzle-orm";
import { rowsOf, type Db, type Store } from "../db/store.ts";
import { messages } from "../db/schema/index.ts";
import { GroupCommit } from "./group-commit.ts";

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

/**
 * `INSERT … SELECT * FROM unnest($1::t1[], $2::t2[], …)`: one bind parameter per
 * column whatever the row count, so a batch costs one short statement (a
 * multi-row VALUES list of 512 messages costs ~30 ms to build in drizzle alone).
 * Ids travel as decimal strings inside the arrays: exact on both drivers.
 */
function unnestInsert(table: string, columns: readonly (readonly [name: string, type: string, values: unknown[]])[], tail = ""): SQL {
  const names = columns.map(([n]) => n).join(", ");
  const arrays = sql.join(
    columns.map(([, type, values]) => sql`${sql.param(values)}::${sql.raw(type)}[]`),
    sql`, `,
  );
  return sql`insert into ${sql.raw(table)} (${sql.raw(names)}) select * from unnest(${arrays}) on conflict do nothing${sql.raw(tail)}`;
}

const dec = (v: bigint | null | undefined) => (v === null || v === undefined ? null : v.toString());

/** Delivery marks in one statement (the ledger batches them: src/delivery/marks.ts). */
export function writeMarks(db: Db, marks: readonly MarkRow[]): Promise<unknown> {
  if (!marks.length) return Promise.resolve();
  return db.execute(
    unnestInsert("delivery_mark", [
      ["user_id", "bigint", marks.map((m) => dec(m.userId))],
      ["device_id", "text", marks.map((m) => m.deviceId)],
      ["message_id", "bigint", marks.map((m) => dec(m.messageId))],
    ]),
  );
}

const senderKey = (from: bigint | null | undefined, clientId: string) => `${from ?? 0n}:${clientId}`;

/** The rows of a batch as `unnest` column arrays (ids as decimal strings). */
function messageColumns(rows: readonly StoreItem["row"][]) {
  return [
    ["id", "bigint", rows.map((r) => dec(r.id))],
    ["client_id", "text", rows.map((r) => r.clientId)],
    ["chat_type", "text", rows.map((r) => r.chatType)],
    ["from_id", "bigint", rows.map((r) => dec(r.fromId))],
    ["to_id", "bigint", rows.map((r) => dec(r.toId))],
    ["msg_type", "text", rows.map((r) => r.msgType ?? "")],
    ["action", "text", rows.map((r) => r.action ?? "")],
    ["payload", "text", rows.map((r) => r.payload)],
    ["e2ee", "text", rows.map((r) => r.e2ee ?? null)],
    ["created_at", "text", rows.map((r) => r.createdAt ?? null)],
    ["server_ts", "bigint", rows.map((r) => String(r.serverTs))],
  ] as const;
}

/**
 * One statement per batch (an implicit transaction, one round trip): the
 * messages go in with ON CONFLICT DO NOTHING, and only the rows that were
 * inserted (the CTE's RETURNING) get their inbox rows and sender marks, so a
 * resent id adds nothing. Five round trips (BEGIN, three INSERTs, COMMIT)
 * were most of a batch's latency on a busy PostgreSQL.
 */
function insertBatch(unique: readonly StoreItem[]): SQL {
  const rows = unique.map((i) => i.row);
  const box = unique.flatMap((i) => i.inbox.map((userId) => [userId, i.row.id] as const));
  const marks = unique.flatMap((i) => i.marks.map((m) => [m, i.row.id] as const));
  const arr = (values: unknown[], type: string) => sql`${sql.param(values)}::${sql.raw(type)}[]`;
  const cols = messageColumns(rows);
  return sql`with m as (
    insert into messages (${sql.raw(cols.map(([n]) => n).join(", "))})
    select * from unnest(${sql.join(
      cols.map(([, type, values]) => arr(values, type)),
      sql`, `,
    )}) on conflict do nothing returning id
  ), b as (
    insert into inbox (user_id, message_id)
    select u, mid from unnest(${arr(box.map(([u]) => dec(u)), "bigint")}, ${arr(box.map(([, id]) => dec(id)), "bigint")}) as x(u, mid)
    where mid in (select id from m) on conflict do nothing
  ), k as (
    insert into delivery_mark (user_id, device_id, message_id)
    select u, d, mid from unnest(${arr(marks.map(([m]) => dec(m.userId)), "bigint")}, ${arr(marks.map(([m]) => m.deviceId), "text")},
      ${arr(marks.map(([, id]) => dec(id)), "bigint")}) as y(u, d, mid)
    where mid in (select id from m) on conflict do nothing
  )
  select id from m`;
}

async function writeMessages(db: Db, items: StoreItem[]): Promise<Stored[]> {
  // The first of equal (sender, client id) pairs in one batch is the one stored.
  const firstOf = new Map<string, number>();
  const unique: StoreItem[] = [];
  items.forEach((item, i) => {
    const key = senderKey(item.row.fromId, item.row.clientId);
    if (!firstOf.has(key)) {
      firstOf.set(key, i);
      unique.push(item);
    }
  });
  const returned = rowsOf<{ id: bigint | string }>(await db.execute(insertBatch(unique)));
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
    const key = senderKey(item.row.fromId, item.row.clientId);
    const first = firstOf.get(key)!;
    if (first === i && inserted.has(item.row.id)) return { serverId: item.row.id, serverTs: item.row.serverTs, duplicate: false };
    const prior = existing.get(key);
    if (prior) return { serverId: prior.id, serverTs: prior.serverTs, duplicate: true };
    // Repeated inside this batch: the first one was just stored.
    const firstItem = items[first]!;
    return { serverId: firstItem.row.id, serverTs: firstItem.row.serverTs, duplicate: true };
  });
}

/** The node's message queue: messages with their inbox rows and sender marks, group-committed. */
export class DeliveryWriter {
  readonly messages: GroupCommit<StoreItem, Stored>;

  constructor(store: Store, maxBatch: number) {
    // Two message batches in flight on PostgreSQL: the second overlaps the first's commit (settled in order).
    this.messages = new GroupCommit((items) => writeMessages(store.db, items), maxBatch, store.kind === "postgres" ? 2 : 1);
  }

  flush(): Promise<void> {
    return this.messages.flush();
  }
}
