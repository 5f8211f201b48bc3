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

function insertMarks(db: Db, marks: readonly MarkRow[]): Promise<unknown> {
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
    const rows = unique.map((i) => i.row);
    const returned = rowsOf<{ id: bigint | string }>(
      await tx.execute(
        unnestInsert(
          "messages",
          [
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
          ],
          " returning id",
        ),
      ),
    );
    const inserted = new Set(returned.map((r) => BigInt(r.id)));
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
    const box = fresh.flatMap((i) => i.inbox.map((userId) => [userId, i.row.id] as const));
    if (box.length) {
      await tx.execute(
        unnestInsert("inbox", [
          ["user_id", "bigint", box.map(([u]) => dec(u))],
          ["message_id", "bigint", box.map(([, m]) => dec(m))],
        ]),
      );
    }
    await insertMarks(tx, fresh.flatMap((i) => i.marks.map((m) => ({ ...m, messageId: i.row.id }))));
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
  await insertMarks(db, marks);
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
