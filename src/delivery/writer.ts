/**
 * Store first, in groups: messages, their inbox rows and the sending device's
 * mark go to the database in one transaction per batch (multi-row INSERTs).
 * A message's promise settles only after its batch committed, so a
 * SERVER_ACK sent on it names a durable row.
 */
import { and, eq, or, sql } from "drizzle-orm";
import type { Db, Store } from "../db/store.ts";
import { deliveryMarks, inbox, messages } from "../db/schema/index.ts";
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

// Rows per INSERT statement: well under PostgreSQL's 65535 bind parameters.
const CHUNK = 4000;

async function insertChunked<T>(rows: T[], insert: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) await insert(rows.slice(i, i + CHUNK));
}

const senderKey = (from: bigint | null | undefined, clientId: string) => `${from ?? 0n}:${clientId}`;

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
  return db.transaction(async (tx) => {
    const inserted = new Set<bigint>();
    await insertChunked(unique, async (chunk) => {
      const ids = await tx
        .insert(messages)
        .values(chunk.map((i) => i.row))
        .onConflictDoNothing()
        .returning({ id: messages.id });
      for (const r of ids) inserted.add(r.id);
    });
    const existing = new Map<string, { id: bigint; serverTs: number }>();
    const dups = unique.filter((i) => !inserted.has(i.row.id));
    if (dups.length) {
      const found = await tx
        .select({ id: messages.id, fromId: messages.fromId, clientId: messages.clientId, serverTs: messages.serverTs })
        .from(messages)
        .where(or(...dups.map((d) => and(sql`coalesce(${messages.fromId}, 0) = ${d.row.fromId ?? 0n}`, eq(messages.clientId, d.row.clientId)))));
      for (const f of found) existing.set(senderKey(f.fromId, f.clientId), { id: f.id, serverTs: f.serverTs });
    }
    const fresh = unique.filter((i) => inserted.has(i.row.id));
    await insertChunked(
      fresh.flatMap((i) => i.inbox.map((userId) => ({ userId, messageId: i.row.id }))),
      (chunk) => tx.insert(inbox).values(chunk).onConflictDoNothing(),
    );
    await insertChunked(
      fresh.flatMap((i) => i.marks.map((m) => ({ ...m, messageId: i.row.id }))),
      (chunk) => tx.insert(deliveryMarks).values(chunk).onConflictDoNothing(),
    );
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
  });
}

async function writeMarks(db: Db, marks: MarkRow[]): Promise<void[]> {
  await insertChunked(marks, (chunk) => db.insert(deliveryMarks).values(chunk).onConflictDoNothing());
  return marks.map(() => undefined);
}

/** The node's two group-commit queues: messages (with inbox and sender marks) and delivery marks. */
export class DeliveryWriter {
  readonly messages: GroupCommit<StoreItem, Stored>;
  readonly marks: GroupCommit<MarkRow, void>;

  constructor(store: Store, maxBatch: number) {
    this.messages = new GroupCommit((items) => writeMessages(store.db, items), maxBatch);
    this.marks = new GroupCommit((items) => writeMarks(store.db, items), maxBatch * 4);
  }

  async flush(): Promise<void> {
    await Promise.all([this.messages.flush(), this.marks.flush()]);
  }
}
