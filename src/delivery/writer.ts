/**
 * Store first, in groups: messages (a C2C message is its row alone), the
 * inbox rows and the sending device's mark of C2S and S2C, and the timeline
 * entries of C2G go to the database in one statement per batch
 * (docs/delivery.md).
 * A message's promise settles only after its batch committed, so a
 * SERVER_ACK sent on it names a durable row.
 */
import { and, eq, or, sql, type SQL } from "drizzle-orm";
import { arrayLiteral, decimalArray, type Store } from "../db/store.ts";
import { ArrayBytes, decimalOf } from "../db/literals.ts";
import { messages } from "../db/schema/index.ts";
import { GroupCommit, type QueueBounds } from "./group-commit.ts";
import { SETTLE_MS, tsidOf } from "./inbox.ts";
import { metrics } from "../metrics/index.ts";

export type MessageRow = typeof messages.$inferInsert;

/**
 * One device's acknowledgement: of a C2C, C2S or S2C message (a `delivery_mark` row), or
 * — with `conv` and `seq` — of a timeline entry (the device's cursor in that
 * conversation moves; docs/delivery.md "Cursors").
 */
export interface MarkRow {
  readonly userId: bigint;
  readonly deviceId: string;
  readonly messageId: bigint;
  readonly conv?: bigint;
  readonly seq?: bigint;
}

/** A message row to write: `payloadUtf8`, when set, is `payload` as UTF-8 bytes (bound instead of the text). */
export type StoredRow = MessageRow & { id: bigint; serverTs: number; payloadUtf8?: Uint8Array };

export interface StoreItem {
  readonly row: StoredRow;
  /** Users whose inbox gets the message (C2S, S2C); none for C2C (its row's sides) and C2G (its group's timeline). */
  readonly inbox: readonly bigint[];
  /** Devices that already have it (a C2S's sending device; the excepted device of a notice). */
  readonly marks: readonly { userId: bigint; deviceId: string }[];
}

export interface Stored {
  readonly serverId: bigint;
  readonly serverTs: number;
  /** The sender had already sent this id: acknowledged again, not stored or delivered twice. */
  readonly duplicate: boolean;
  /** Another sender's message of this conversation has this tsid: refused, nothing stored (docs/delivery.md "Acks"). */
  readonly taken?: boolean;
  /** C2G: the message's number in its group's timeline. */
  readonly seq?: bigint;
}

/*
 * The two hot statements have a fixed text: one bind parameter per column,
 * each an array (`unnest`), whatever the batch size. A multi-row VALUES list of
 * 512 messages cost ~30 ms to build in drizzle alone; a fixed text is prepared
 * once per connection (Store.query) and planned once. Ids travel as decimal
 * strings inside the arrays: exact on both drivers.
 */

/** Ranges of numbers past a hole kept per cursor; beyond them the highest are forgotten (delivered once more, never lost). */
export const ABOVE_MAX = 1024;

/**
 * A ledger batch (src/delivery/marks.ts) in one statement: inbox marks are
 * inserted; timeline acks arrive folded into runs of consecutive numbers per
 * device and conversation (`foldRuns`: a group's acks are nearly always one
 * run per device per tick) and become one cursor row write each. `above` is
 * a multirange: the acked runs join it, everything at or below the cursor
 * leaves it, and the cursor runs on through its first range when that starts
 * right after the cursor. Numbers up to the user's latest join before the
 * acked ones count as acknowledged (the device could not see them). Past
 * ABOVE_MAX ranges the highest are forgotten (delivered once more, never
 * lost). A concurrent write of the same row (two nodes) is merged as sets
 * (the higher cursor, the union above it): nothing acknowledged is lost.
 * Every step is O(ranges), whatever the number of messages past a hole
 * (an array of numbers made each write O(1,024) per device once a hole stayed open).
 */
const WRITE_MARKS = `with k as (
  insert into delivery_mark (user_id, device_id, message_id)
  select * from unnest($1::bigint[], $2::text[], $3::bigint[]) on conflict do nothing
), a as (
  select * from unnest($4::bigint[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[]) as a(u, d, c, lo, hi)
), g as (
  select u, d, c, min(lo) as low, max(hi) as high, count(*) as n, range_agg(int8range(lo, hi, '[]')) as acked
  from a group by u, d, c
), cur as (
  select g.*, x.above, greatest(coalesce(x.seq, 0), coalesce((select max(j.join_seq) from timeline_member j
      where j.conv_id = g.c and j.user_id = g.u and j.join_seq < g.low), 0)) as base
  from g left join timeline_cursor x on x.user_id = g.u and x.device_id = g.d and x.conv_id = g.c
), f as (
  -- The common case, no hole before or after: one run that reaches the cursor. No multirange work.
  select cur.*, cur.n = 1 and coalesce(isempty(cur.above), true) and cur.low <= cur.base + 1 as fast from cur
), s as (
  select u, d, c, fast, case when fast then greatest(base, high) else coalesce((select upper(r) - 1
      from unnest(coalesce(above, '{}'::int8multirange) + acked) as r where lower(r) <= base + 1 and upper(r) > base + 1), base) end as seq,
    case when fast then null else coalesce(above, '{}'::int8multirange) + acked end as runs
  from f
)
insert into timeline_cursor (user_id, device_id, conv_id, seq, above)
select u, d, c, seq, case when fast then '{}'::int8multirange else coalesce((select range_agg(r) from
    (select r from unnest(runs - int8multirange(int8range(null, seq, '[]'))) as r order by lower(r) limit ${ABOVE_MAX}) q),
    '{}'::int8multirange) end
from s order by u, d, c
on conflict (user_id, device_id, conv_id) do update set
  seq = greatest(timeline_cursor.seq, excluded.seq),
  above = case when isempty(timeline_cursor.above) and isempty(excluded.above) then timeline_cursor.above
    else (timeline_cursor.above + excluded.above) - int8multirange(int8range(null, greatest(timeline_cursor.seq, excluded.seq), '[]')) end`;

/** A ledger batch of inbox marks only: WRITE_MARKS's first step alone. */
const WRITE_INBOX_MARKS = `insert into delivery_mark (user_id, device_id, message_id)
  select * from unnest($1::bigint[], $2::text[], $3::bigint[]) on conflict do nothing`;

/**
 * The same batch as plain inserts, tried first: a mark is nearly always new (one ack per device and message), and
 * ON CONFLICT's speculative insertion cost PostgreSQL ~20 % of a mark (bench/FINDINGS.md). A batch holding a mark
 * already written (an ack sent twice, a mark repaired from the share) is refused whole and written again with it.
 */
const PLAIN_INBOX_MARKS = `insert into delivery_mark (user_id, device_id, message_id)
  select * from unnest($1::bigint[], $2::text[], $3::bigint[])`;

/** Timeline acks as runs of consecutive numbers per (user, device, conversation), in columns for WRITE_MARKS. */
export interface Runs {
  readonly users: string[];
  readonly devices: string[];
  readonly convs: string[];
  readonly lo: string[];
  readonly hi: string[];
}

/** Folds timeline acks (marks with `seq`) into runs: a device's acks in one group, sorted, cut at each hole. */
export function foldRuns(marks: readonly MarkRow[]): Runs {
  // user → device → conversation → numbers (nested maps: no key string per ack).
  const byUser = new Map<bigint, Map<string, Map<bigint, bigint[]>>>();
  for (const m of marks) {
    if (m.seq === undefined) continue;
    let devices = byUser.get(m.userId);
    if (!devices) byUser.set(m.userId, (devices = new Map()));
    let convs = devices.get(m.deviceId);
    if (!convs) devices.set(m.deviceId, (convs = new Map()));
    const seqs = convs.get(m.conv!);
    if (seqs) seqs.push(m.seq);
    else convs.set(m.conv!, [m.seq]);
  }
  const out: Runs = { users: [], devices: [], convs: [], lo: [], hi: [] };
  for (const [user, devices] of byUser) {
    const u = user.toString();
    for (const [device, convs] of devices) {
      for (const [conv, seqs] of convs) {
        const c = conv.toString();
        let sorted = true;
        for (let i = 1; i < seqs.length && sorted; i++) sorted = seqs[i - 1]! <= seqs[i]!;
        if (!sorted) seqs.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
        let lo = seqs[0]!;
        let hi = lo;
        const cut = () => {
          out.users.push(u);
          out.devices.push(device);
          out.convs.push(c);
          out.lo.push(lo.toString());
          out.hi.push(hi.toString());
        };
        for (let i = 1; i < seqs.length; i++) {
          const s = seqs[i]!;
          if (s <= hi + 1n) {
            if (s > hi) hi = s;
            continue;
          }
          cut();
          lo = hi = s;
        }
        cut();
      }
    }
  }
  return out;
}

export function writeMarks(store: Store, marks: readonly MarkRow[]): Promise<unknown> {
  if (!marks.length) return Promise.resolve();
  const users: string[] = [];
  const devices: string[] = [];
  const ids: string[] = [];
  for (const m of marks) {
    if (m.seq !== undefined) continue;
    users.push(decimalOf(m.userId));
    devices.push(m.deviceId);
    ids.push(m.messageId.toString());
  }
  // No timeline ack in the batch (C2C, C2S, S2C): the cursor CTEs are left out. Planning and running them over
  // empty arrays cost as much again as the inserts (db-cost: 12–16 → 6–7 µs per ack on PostgreSQL, ~40 → ~15 on PGlite).
  if (ids.length === marks.length) {
    const params = [decimalArray(users), arrayLiteral(devices), decimalArray(ids)];
    return plainFirst(() => store.query(PLAIN_INBOX_MARKS, params), () => store.query(WRITE_INBOX_MARKS, params));
  }
  const runs = foldRuns(marks);
  return store.query(WRITE_MARKS, [
    decimalArray(users),
    arrayLiteral(devices),
    decimalArray(ids),
    decimalArray(runs.users),
    arrayLiteral(runs.devices),
    decimalArray(runs.convs),
    decimalArray(runs.lo),
    decimalArray(runs.hi),
  ]);
}

const dec = (v: bigint | null | undefined) => (v === null || v === undefined ? null : v.toString());

/**
 * What makes a message a resend of another: the same sender and §2.8 id, and for C2C and C2G the same conversation.
 * A client-chosen id is no key beyond its conversation (docs/delivery.md "Acks name one stored message"): the same
 * id sent by one user in two conversations is two messages. C2S and S2C ids are per sender.
 */
type ResendFields = Pick<StoredRow, "chatType" | "fromId" | "toId" | "clientId">;
const resendKey = (r: ResendFields): string =>
  r.chatType === "C2C" || r.chatType === "C2G" ? `${r.fromId ?? 0n}:${r.chatType}:${r.toId}:${r.clientId}` : `${r.fromId ?? 0n}:${r.clientId}`;

/**
 * The stored row a resend repeats, through the unique index that holds its id (exported for its plan test):
 * `messages_c2c_tsid_uq` (tsid in the pair), `messages_c2g_tsid_uq` (tsid in the group),
 * `messages_sender_client_id_uq` (C2S, S2C: sender and id).
 */
export function resendOf(r: ResendFields): SQL {
  const same = and(sql`coalesce(${messages.fromId}, 0) = ${r.fromId ?? 0n}`, eq(messages.clientId, r.clientId))!;
  const tsid = sql`split_part(${messages.clientId}, '.', 2) = ${tsidOf(r.clientId)}`;
  if (r.chatType === "C2C") {
    const [lo, hi] = r.fromId! < r.toId! ? [r.fromId!, r.toId!] : [r.toId!, r.fromId!];
    return and(
      sql`${messages.chatType} = 'C2C'`,
      tsid,
      sql`least(${messages.fromId}, ${messages.toId}) = ${lo} and greatest(${messages.fromId}, ${messages.toId}) = ${hi}`,
      same,
    )!;
  }
  if (r.chatType === "C2G") return and(sql`${messages.chatType} = 'C2G'`, tsid, eq(messages.toId, r.toId!), same)!;
  return and(sql`${messages.chatType} in ('C2S', 'S2C')`, same)!; // the partial index's own predicate, as a literal
}

/** Deduplicating: inbox rows and marks only of the messages actually inserted, and none that exist already. */
const DEDUPLICATING_ROWS = " where mid in (select id from m) on conflict do nothing";

/**
 * One statement per batch (an implicit transaction, one round trip). Five
 * round trips (BEGIN, three INSERTs, COMMIT) were most of a batch's latency
 * on a busy PostgreSQL.
 *
 * Conflicts are rare (a resent id; a tsid another sender's message of the
 * conversation holds), so a batch goes in first as plain inserts: ON CONFLICT
 * makes PostgreSQL probe every unique index before each row (speculative
 * insertion), ~15 % of the database's CPU per C2C message (bench/FINDINGS.md).
 * A batch refused with unique_violation left nothing behind (one statement)
 * and is written again `deduplicating`: the messages with ON CONFLICT DO
 * NOTHING, and only the rows that were inserted (the CTE's RETURNING) get
 * their inbox rows and sender marks, so a resent id adds nothing.
 *
 * C2G rows get their timeline numbers here: each group's head is advanced by
 * the count of its inserted messages (groups in id order, so two batches lock
 * heads in the same order), and the messages take the numbers below it in id
 * order. The head's row lock is held to the commit, so numbers are given out
 * in commit order and never skipped: a reader that sees number n sees every
 * number below it.
 */
const insertBatch = (rows: string, deduplicating: boolean, timeline: boolean, extra: boolean) =>
  !deduplicating && !timeline && !extra ? PLAIN_INSERT + rows : `with m as (
  insert into messages (id, client_id, chat_type, from_id, to_id, msg_type, action, payload, e2ee, created_at, server_ts, from_device)
  ${rows}
  ${deduplicating ? "on conflict do nothing " : ""}returning id, chat_type, to_id
)${timeline ? TIMELINE_CTES : ""}${extra ? extraCtes(deduplicating) : ""}
${timeline ? "select m.id, t.seq from m left join t on t.message_id = m.id" : "select m.id, null::bigint as seq from m"}`;

/**
 * A batch of C2C messages alone, written plainly: it either inserts every row or fails as a whole (a unique
 * violation is written again deduplicating), so nothing needs to come back. Returning the ids through a CTE cost
 * PostgreSQL a materialised scan and the node a parsed row per message, for ids it already held.
 */
const PLAIN_INSERT =
  "insert into messages (id, client_id, chat_type, from_id, to_id, msg_type, action, payload, e2ee, created_at, server_ts, from_device)\n";

/**
 * Inbox rows and marks, only in the texts for batches that hold some (C2S, S2C): a batch of C2C messages alone has
 * none (docs/delivery.md "C2C"), and planning two inserts over empty arrays is a C2C batch's cost for nothing.
 */
const extraCtes = (deduplicating: boolean) => `, b as (
  insert into inbox (user_id, message_id)
  select u, mid from unnest($13::bigint[], $14::bigint[]) as x(u, mid)${deduplicating ? DEDUPLICATING_ROWS : ""}
), k as (
  insert into delivery_mark (user_id, device_id, message_id)
  select u, d, mid from unnest($15::bigint[], $16::text[], $17::bigint[]) as y(u, d, mid)${deduplicating ? DEDUPLICATING_ROWS : ""}
)`;

/**
 * The C2G numbering steps, only in the texts for batches that hold a group
 * message: over a batch without one they planned and ran three more steps on
 * nothing (~15 % of a C2C message's cost on PGlite, bench/FINDINGS.md).
 */
const TIMELINE_CTES = `, g as (
  select to_id as conv, count(*) as n from m where chat_type = 'C2G' group by to_id
), h as (
  insert into timeline_head (conv_id, last_seq) select conv, n from g order by conv
  on conflict (conv_id) do update set last_seq = timeline_head.last_seq + excluded.last_seq
  returning conv_id, last_seq
), t as (
  insert into timeline (message_id, conv_id, seq)
  select m.id, m.to_id, h.last_seq - g.n + row_number() over (partition by m.to_id order by m.id)
  from m join g on g.conv = m.to_id join h on h.conv_id = m.to_id
  returning message_id, seq
)`;

const BATCH_ROWS = `select * from unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::text[],
    $8::text[], $9::text[], $10::text[], $11::bigint[], $12::text[])`;
/**
 * A batch of one message (an idle node's, or a large message, which goes
 * alone) binds its columns as scalars: a 16 MiB payload inside a text[]
 * literal cost the driver an escaping pass and PostgreSQL's array parser
 * hundreds of ms of CPU; as a text parameter it is copied, and a payload the
 * node holds as bytes already (as it arrived) is bound as those bytes.
 */
const ONE_ROW = `select $1::bigint, $2::text, $3::text, $4::bigint, $5::bigint, $6::text, $7::text,
    $8::text, $9::text, $10::text, $11::bigint, $12::text`;

/** insertBatch's fixed texts by [deduplicating][one row][with a group message][with inbox rows or marks], each prepared once per connection. */
const FLAGS = [false, true];
const INSERT = FLAGS.map((dedup) => [BATCH_ROWS, ONE_ROW].map((rows) => FLAGS.map((timeline) => FLAGS.map((extra) => insertBatch(rows, dedup, timeline, extra)))));
const insertText = (dedup: boolean, one: boolean, timeline: boolean, extra: boolean): string => INSERT[+dedup]![+one]![+timeline]![+extra]!;

const isUniqueViolation = (e: unknown): boolean => (e as { code?: unknown } | null)?.code === "23505";

type Inserted = { id: bigint | string; seq: bigint | string | null };

/**
 * Plain inserts first; a batch that hit a unique index is written again deduplicating. `undefined`: a plain batch
 * without a group message, inbox rows or marks stored every row (PLAIN_INSERT returns none).
 */
function insertRows(store: Store, one: boolean, timeline: boolean, params: unknown[], lane: boolean): Promise<Inserted[] | undefined> {
  const extra = params.length > MESSAGE_COLUMNS; // batchParams leaves the inbox and mark columns out when it has none
  // Batches on the writer's own pipelined connection; a large message (its lane) on the pool, never in front of them.
  const run = <T>(text: string) => (lane ? store.query<T>(text, params) : store.writes<T>(text, params));
  return plainFirst<Inserted[] | undefined>(
    async () => {
      const rows = await run<Inserted>(insertText(false, one, timeline, extra));
      return timeline || extra ? rows : undefined;
    },
    () => run<Inserted>(insertText(true, one, timeline, extra)),
  );
}

/** A batch written plainly, and when a unique index refused it (nothing was left behind), written again deduplicating. */
async function plainFirst<T>(plain: () => Promise<T>, deduplicating: () => Promise<T>): Promise<T> {
  try {
    return await plain();
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    metrics.dbRewrites.inc();
    return deduplicating();
  }
}

/** The messages columns come first in the batch statement's parameters. */
const MESSAGE_COLUMNS = 12;

/**
 * The statement's parameters. Each message column goes as one array literal
 * written here as bytes (rowsAsArrays; postgres.js serialised and escaped
 * each element of a JS array itself, ~4 % of the node's CPU in a C2C run,
 * bench/FINDINGS.md); a batch of one message binds its columns as scalars.
 */
function batchParams(unique: readonly StoreItem[], one: boolean): unknown[] {
  const columns: unknown[] = one ? oneRow(unique[0]!.row) : rowsAsArrays(unique);
  const boxUsers: string[] = [];
  const boxIds: string[] = [];
  const markUsers: string[] = [];
  const markDevices: string[] = [];
  const markIds: string[] = [];
  for (const item of unique) {
    if (!item.inbox.length && !item.marks.length) continue;
    const id = item.row.id.toString();
    for (const u of item.inbox) {
      boxUsers.push(decimalOf(u));
      boxIds.push(id);
    }
    for (const m of item.marks) {
      markUsers.push(decimalOf(m.userId));
      markDevices.push(m.deviceId);
      markIds.push(id);
    }
  }
  if (!boxIds.length && !markIds.length) return columns; // the text without the inbox and mark steps
  return [...columns, decimalArray(boxUsers), decimalArray(boxIds), decimalArray(markUsers), arrayLiteral(markDevices), decimalArray(markIds)];
}

/** One message's columns as scalars; its payload as the bytes it arrived in when the node holds them (bound as the text's UTF-8). */
function oneRow(r: StoredRow): unknown[] {
  return [
    r.id.toString(), r.clientId, r.chatType, dec(r.fromId), dec(r.toId), r.msgType ?? "", r.action ?? "", r.payloadUtf8 ?? r.payload,
    r.e2ee ?? null, r.createdAt ?? null, String(r.serverTs), r.fromDevice ?? null,
  ];
}

/** The scratch the batch's column literals are written in (one statement's columns at a time). */
const LITERALS = new ArrayBytes();

/** One column: every row's element through `element`, as one literal's bytes. */
function column(unique: readonly StoreItem[], element: (w: ArrayBytes, r: StoredRow) => void): Uint8Array {
  const w = LITERALS.open();
  for (let i = 0; i < unique.length; i++) element(w, unique[i]!.row);
  return w.close();
}

/**
 * The batch's columns (BATCH_ROWS), each element as written into its array literal (ArrayBytes): never-null
 * decimals bare, texts quoted, NULL where absent; a payload held as bytes is copied in, not decoded.
 */
const COLUMNS: readonly ((w: ArrayBytes, r: StoredRow) => void)[] = [
  (w, r) => w.bare(r.id.toString()),
  (w, r) => w.text(r.clientId),
  (w, r) => w.text(r.chatType),
  (w, r) => w.bare(r.fromId === null || r.fromId === undefined ? "NULL" : decimalOf(r.fromId)),
  (w, r) => w.bare(decimalOf(r.toId!)),
  (w, r) => w.text(r.msgType ?? ""),
  (w, r) => w.text(r.action ?? ""),
  (w, r) => (r.payloadUtf8 ? w.utf8(r.payloadUtf8) : w.text(r.payload)),
  (w, r) => w.text(r.e2ee),
  (w, r) => w.text(r.createdAt),
  (w, r) => w.bare(String(r.serverTs)),
  (w, r) => w.text(r.fromDevice),
];

/** Each column of the batch as one array literal's UTF-8, bound as text (Store.query). */
function rowsAsArrays(unique: readonly StoreItem[]): Uint8Array[] {
  const out: Uint8Array[] = new Array(COLUMNS.length);
  for (let c = 0; c < COLUMNS.length; c++) out[c] = column(unique, COLUMNS[c]!);
  return out;
}

/**
 * Each item's first occurrence in the batch (the first of a message and its resends is the one stored), found by
 * client id: a resend key per message was four strings a message, for a repeat nearly no batch holds.
 */
function firstOccurrences(items: readonly StoreItem[]): number[] {
  const first: number[] = new Array(items.length);
  const byClientId = new Map<string, number>();
  for (let i = 0; i < items.length; i++) {
    const row = items[i]!.row;
    const j = byClientId.get(row.clientId);
    let f = i;
    if (j === undefined) byClientId.set(row.clientId, i);
    else {
      // The same client id from another sender or conversation is another message (rare): the earlier firsts are
      // compared by their resend keys, built only here.
      const key = resendKey(row);
      for (let k = j; k < i; k++) {
        if (first[k] === k && resendKey(items[k]!.row) === key) {
          f = k;
          break;
        }
      }
    }
    first[i] = f;
  }
  return first;
}

async function writeMessages(store: Store, items: StoreItem[], lane: boolean): Promise<Stored[]> {
  const db = store.db;
  const first = firstOccurrences(items);
  const unique: StoreItem[] = [];
  let group = false;
  for (let i = 0; i < items.length; i++) {
    if (first[i] !== i) continue;
    unique.push(items[i]!);
    group ||= items[i]!.row.chatType === "C2G";
  }
  const one = unique.length === 1;
  const params = batchParams(unique, one);
  const returned = await insertRows(store, one, group, params, lane);
  // undefined: a plain batch stored every row (nothing comes back, nothing to look up).
  const inserted = returned && new Map(returned.map((r) => [BigInt(r.id), r.seq === null ? undefined : BigInt(r.seq)]));
  const stored = (id: bigint) => inserted === undefined || inserted.has(id);
  // Resent ids (rare): the stored row's server id and time, read after the insert committed.
  const existing = new Map<string, { id: bigint; serverTs: number }>();
  const dups = inserted ? unique.filter((i) => !inserted.has(i.row.id)) : [];
  if (dups.length) {
    const found = await db
      .select({ id: messages.id, chatType: messages.chatType, fromId: messages.fromId, toId: messages.toId, clientId: messages.clientId, serverTs: messages.serverTs })
      .from(messages)
      .where(or(...dups.map((d) => resendOf(d.row))));
    for (const f of found) existing.set(resendKey(f), { id: f.id, serverTs: f.serverTs });
  }
  const out: Stored[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const row = items[i]!.row;
    const f = first[i]!;
    if (f === i && stored(row.id)) {
      const seq = inserted?.get(row.id);
      out[i] = seq === undefined ? { serverId: row.id, serverTs: row.serverTs, duplicate: false } : { serverId: row.id, serverTs: row.serverTs, duplicate: false, seq };
      continue;
    }
    const prior = existing.size ? existing.get(resendKey(row)) : undefined;
    const firstRow = items[f]!.row;
    if (prior) out[i] = { serverId: prior.id, serverTs: prior.serverTs, duplicate: true };
    // Not stored and no row of this sender: the conversation's tsid belongs to another sender.
    else if (!stored(firstRow.id)) out[i] = { serverId: row.id, serverTs: row.serverTs, duplicate: false, taken: true };
    // Repeated inside this batch: the first one was just stored.
    else out[i] = { serverId: firstRow.id, serverTs: firstRow.serverTs, duplicate: true };
  }
  return out;
}

/** What a queued message holds in memory, about (its stored texts). */
const itemBytes = (i: StoreItem): number => (i.row.payloadUtf8?.length ?? i.row.payload.length) + (i.row.e2ee?.length ?? 0);

/**
 * Whose earlier batches a message's acknowledgement and push wait for: its
 * group's (timeline numbers are pushed in order) or its sender's. A notice
 * (no sender) waits for every earlier batch.
 */
const orderKey = (i: StoreItem): unknown =>
  i.row.chatType === "C2G" ? `g${i.row.toId}` : i.row.fromId === null || i.row.fromId === undefined ? undefined : i.row.fromId;

/** A batch takes messages up to this many stored bytes (at least one): a 16 MiB message is written alone. */
const BATCH_BYTES = 1 << 20;

/**
 * A second batch goes out beside the one in flight only while the batches in flight weigh less than this
 * (GroupCommit `overlapBelow`; a direct message weighs 1): at light and moderate load commits overlap; under heavy
 * load one large batch is in flight while the next grows (bench/FINDINGS.md 2026-11-28).
 */
const OVERLAP_BELOW = 32;

/**
 * A group message weighs as much as a full batch: nothing goes out beside a batch holding one. A group's batches
 * take its head row one after another (its timeline numbers), so a second batch beside one of the same group only
 * waits in the database; overlapped, 1,000-member groups lost a third of their rate (bench/FINDINGS.md 2026-11-28).
 */
const weightOf = (i: StoreItem): number => (i.row.chatType === "C2G" ? OVERLAP_BELOW : 1);

/**
 * A message batch in flight this long (ms) gives its slot back (GroupCommit `stallMs`): a statement waiting for
 * a lock, and the one pipelined behind it on the writer's connection (src/db/store.ts), no longer hold every later
 * message; the next batch goes to the pool. Commits take under 5 ms 98 % of the time here (bench/FINDINGS.md).
 * PGlite runs one statement at a time: nothing to go beside.
 */
const STALL_MS = 100;

/** The node's message queue: messages with their inbox rows, sender marks and timeline entries, group-committed, bounded. */
export class DeliveryWriter {
  readonly messages: GroupCommit<StoreItem, Stored>;
  /** Failed batches that may still commit (lost connection): their least id, until `until` (ms). */
  #pinned: { id: bigint; until: number }[] = [];

  constructor(
    store: Store,
    maxBatch: number,
    bounds: Omit<QueueBounds<StoreItem>, "sizeOf"> = { maxItems: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER },
    depth = 2,
    private readonly now: () => number = Date.now,
  ) {
    // Up to `depth` batches of small messages in flight (IBIS_DELIVERY_WRITE_DEPTH, default 2), the second only while
    // the one in flight is small: at light load a message is written at once instead of after the commit in flight
    // (a commit the scheduler stalled then holds up its own senders only), and under heavy load one large batch
    // commits while the next grows, which costs the database and the node less per message than two smaller ones
    // overlapping (bench/FINDINGS.md 2026-11-27 midday and 2026-11-28). On PostgreSQL a large message (a batch over
    // BATCH_BYTES) goes in a lane of its own beside them; batches settle in order per sender (per group for C2G), so
    // its long insert holds up no one else's acknowledgements. PGlite has one connection: one batch at a time.
    this.messages = new GroupCommit(
      metrics.timed((items: StoreItem[], lane: boolean) =>
        writeMessages(store, items, lane).catch((err: unknown) => {
          if (mayHaveCommitted(err)) this.#pin(items, now());
          throw err;
        }),
      ),
      maxBatch,
      store.kind === "postgres" ? depth : 1,
      { ...bounds, sizeOf: itemBytes },
      { keyOf: orderKey, batchBytes: BATCH_BYTES, largeLane: store.kind === "postgres", overlapBelow: OVERLAP_BELOW, weightOf, ...(store.kind === "postgres" ? { stallMs: STALL_MS } : {}) },
    );
  }

  flush(): Promise<void> {
    return this.messages.flush();
  }

  /**
   * This node's watermark (src/delivery/floors.ts): no message with a smaller
   * id can still commit from this node. `next` is an id just minted (every
   * later one is larger); the least id queued, in the database's hands, or of a
   * failed batch that may have committed after all, holds it lower.
   */
  lowWater(next: bigint): bigint {
    let low = next;
    this.messages.forEachUnanswered((item) => {
      if (item.row.id < low) low = item.row.id;
    });
    const t = this.now();
    if (this.#pinned.length) this.#pinned = this.#pinned.filter((p) => p.until > t);
    for (const p of this.#pinned) if (p.id < low) low = p.id;
    return low;
  }

  #pin(items: readonly StoreItem[], t: number): void {
    let id = items[0]!.row.id;
    for (const i of items) if (i.row.id < id) id = i.row.id;
    this.#pinned.push({ id, until: t + SETTLE_MS });
  }
}

/**
 * Whether a failed write may have committed all the same: anything but an
 * error the database reported for the statement (a SQLSTATE outside class 08,
 * connection exceptions), which rolled it back. A connection lost while the
 * commit was on its way is the case this guards.
 */
export function mayHaveCommitted(err: unknown): boolean {
  const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  return !(typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith("08"));
}
