/**
 * Reads of the delivery state (docs/delivery.md): a device's pending set is
 * its user's inbox at or above the device floor, minus the device's marks,
 * plus its groups' timeline entries within the user's membership spans past
 * the device's cursors.
 */
import { and, asc, desc, eq, getTableColumns, isNull, lt, sql, type SQL } from "drizzle-orm";
import { BatchLoader } from "../db/batch-load.ts";
import { FixedStatement, type Bound } from "../db/statement.ts";
import { arrayLiteral, rowsOf, type Store } from "../db/store.ts";
import { deliveryDevices, deliveryMarks, inbox, messages, timeline, timelineMembers, userDevices } from "../db/schema/index.ts";
import { ID_EPOCH_MS, idFloorForTime } from "../ids/tsid.ts";

// No floor recorded: nothing is pending (every device is given one when first seen).
const NO_FLOOR = (1n << 63n) - 1n;
// idFloorForTime in SQL: ms since the id epoch, shifted past node and sequence bits.
const SHIFT = 22;
import type { ChatType } from "./ports.ts";
import type { MarkRow } from "./writer.ts";

export type MessageRecord = typeof messages.$inferSelect;

// A span without leave_seq: still a member.
const OPEN_SPAN = sql.raw(String((1n << 63n) - 1n));

const decimals = (xs: readonly bigint[]) => sql.param(xs.map(String));

/** A device's floor (its first sight), or "nothing pending" when it has none. */
const floorOf = (userId: bigint, deviceId: string): SQL => sql`coalesce((select ${deliveryDevices.floorId} from ${deliveryDevices}
  where ${deliveryDevices.userId} = ${userId} and ${deliveryDevices.deviceId} = ${deviceId}), ${NO_FLOOR})`;

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
 * Timeline entries a user's device has not acknowledged: within the user's
 * membership spans, past the device's cursor, not among the numbers it
 * acknowledged past a hole, from its floor up. `device`, `floor` and the
 * user are SQL (a parameter, or a column of an outer query).
 */
function timelinePending(user: SQL, device: SQL, floor: SQL): SQL {
  // Entries are read per span through (conv_id, seq) behind `offset 0`: a planner left free chose a scan of every
  // group's entries since the floor (timeline by message_id), which grows with all traffic, not with this user's.
  return sql`select t.message_id as mid, t.conv_id, t.seq from timeline_member s
    left join timeline_cursor c on c.user_id = s.user_id and c.device_id = ${device} and c.conv_id = s.conv_id
    cross join lateral (select t.message_id, t.conv_id, t.seq from timeline t
      where t.conv_id = s.conv_id and t.seq > greatest(s.join_seq, coalesce(c.seq, 0))
        and t.seq <= coalesce(s.leave_seq, ${OPEN_SPAN}) and t.message_id >= ${floor} offset 0) t
    where s.user_id = ${user} and not coalesce(c.above @> t.seq, false)`;
}

/** How long a minted message may take to commit at most: compaction's settled bound (src/delivery/index.ts). */
export const SETTLE_MS = 10 * 60_000;

/**
 * The least server id among each of the user's spans' first pending entry (by
 * number), or null: compaction's bound for the device's timelines. An entry
 * numbered later was committed later, so it was minted at most SETTLE_MS
 * before the first one's commit: the floor goes to the first id of the
 * millisecond SETTLE_MS before this one's and no pending entry is left under
 * it, while each span costs one index probe
 * (the minimum over all pending entries would read a device's whole backlog,
 * an abandoned device's every entry of its groups, at every compaction).
 */
function firstTimelinePending(user: SQL, device: SQL, floor: SQL): SQL {
  return sql`select min(t.message_id) from timeline_member s
    left join timeline_cursor c on c.user_id = s.user_id and c.device_id = ${device} and c.conv_id = s.conv_id
    cross join lateral (select t.message_id from timeline t
      where t.conv_id = s.conv_id and t.seq > greatest(s.join_seq, coalesce(c.seq, 0))
        and t.seq <= coalesce(s.leave_seq, ${OPEN_SPAN}) and t.message_id >= ${floor}
        and not coalesce(c.above @> t.seq, false)
      order by t.seq limit 1) t
    where s.user_id = ${user}`;
}

/**
 * Message `id` has no mark of this device. One primary-key probe per message: `offset 0` keeps the planner from
 * making it an anti join, which with stale statistics (a database filling faster than it is analyzed) read every
 * mark of the device for each message walked, a cost that grew with each acknowledgement (bench/FINDINGS.md).
 */
const unmarked = (user: SQL, device: SQL, id: SQL): SQL =>
  sql`not exists (select 1 from delivery_mark k where k.user_id = ${user} and k.device_id = ${device} and k.message_id = ${id} offset 0)`;

/** Message row `row` was sent from this device (its from_device; false for rows stored before 0014 and for S2C). */
const sentFrom = (row: string, user: SQL, device: SQL): SQL =>
  sql`coalesce(${sql.raw(row)}.from_id = ${user} and ${sql.raw(row)}.from_device = ${device}, false)`;

/** One source of a device's direct messages: the user's rows of a table (alias `r`), by server id. */
interface DirectSource {
  /** `table r where …`: the user's rows. */
  readonly rows: SQL;
  /** The server id column (what the source's index is ordered by after the user). */
  readonly id: SQL;
  /** The columns a row's test needs. */
  readonly columns: SQL;
  /** Whether row `r` is the device's (not sent from the device itself). */
  readonly its: SQL;
}

/**
 * Where a device's messages outside timelines are: its user's inbox (C2S, S2C), and its user's C2C messages
 * (docs/delivery.md "C2C": a C2C message has no inbox rows, its sides say whose it is), those received and those
 * sent, except from this device (the row's from_device; rows stored before it existed have a sender mark). One
 * index range each (the inbox's key, messages_c2c_to_idx, messages_c2c_from_idx); a note to oneself is in both
 * C2C sides, and every reader takes ids as a set.
 */
const directSources = (user: SQL, device: SQL): DirectSource[] => {
  const c2c = (side: SQL): DirectSource => ({
    rows: sql`messages r where r.chat_type = 'C2C' and ${side} = ${user}`,
    id: sql`r.id`,
    columns: sql`r.id, r.from_id, r.from_device`,
    its: sql`not ${sentFrom("r", user, device)}`,
  });
  return [{ rows: sql`inbox r where r.user_id = ${user}`, id: sql`r.message_id`, columns: sql`r.message_id`, its: sql`true` }, c2c(sql`r.to_id`), c2c(sql`r.from_id`)];
};

/**
 * A device's new floor outside timelines: the least server id it has not acknowledged, at most `bound`, as
 * lateral joins after `n` (its delivery_device row) and the column of the last one that holds it. Each source (its
 * inbox, its two C2C sides) is walked up its index from the floor only below the best found so far, which starts
 * at the first row of each source when that one is pending: a device stuck behind one message it never
 * acknowledged costs a probe per source at each run, not a walk over everything acknowledged since.
 */
function directFloor(user: SQL, device: SQL, floor: SQL, bound: SQL): { joins: SQL; best: SQL } {
  const sources = directSources(user, device);
  const w = (i: number) => sql.raw(`w${i}`);
  const atFloor = sources.map(
    (x) => sql`(select ${x.id} from (select ${x.columns} from ${x.rows} and ${x.id} >= ${floor} order by ${x.id} limit 1) r
      where ${x.its} and ${unmarked(user, device, x.id)})`,
  );
  const walks = sources.map(
    (x, i) => sql`cross join lateral (select least(${w(i)}.best, (select ${x.id} from ${x.rows} and ${x.id} >= ${floor} and ${x.id} < ${w(i)}.best
        and ${x.its} and ${unmarked(user, device, x.id)} order by ${x.id} limit 1)) as best offset 0) ${w(i + 1)}`,
  );
  return {
    joins: sql`cross join lateral (select least(${bound}, ${sql.join(atFloor, sql`, `)}) as best offset 0) ${w(0)}
    ${sql.join(walks, sql`
    `)}`,
    best: sql`${w(sources.length)}.best`,
  };
}

/** Server ids a device has not acknowledged outside timelines (its sources' rows from its floor up, without a mark). */
const directPending = (user: SQL, device: SQL, floor: SQL): SQL =>
  sql.join(
    directSources(user, device).map(
      (x) => sql`select ${x.id} as mid from ${x.rows} and ${x.id} >= ${floor} and ${x.its} and ${unmarked(user, device, x.id)}`,
    ),
    sql` union all `,
  );

/**
 * Server ids of the messages the device has not acknowledged: its inbox
 * messages and its timelines' entries, none of `exclude` (acknowledged but
 * maybe not committed yet, src/delivery/marks.ts).
 */
function pendingIds(userId: bigint, deviceId: string, exclude: readonly MarkRow[] = []): SQL {
  const ids = exclude.filter((m) => m.seq === undefined).map((m) => m.messageId);
  const seqs = exclude.filter((m) => m.seq !== undefined);
  const [u, d, floor] = [sql`${userId}`, sql`${deviceId}`, floorOf(userId, deviceId)];
  const skipIds = ids.length ? sql` where not (p.mid = any(${decimals(ids)}::bigint[]))` : sql``;
  const skipSeqs = seqs.length
    ? sql` and not exists (select 1 from unnest(${decimals(seqs.map((m) => m.conv!))}::bigint[], ${decimals(seqs.map((m) => m.seq!))}::bigint[])
        as x(c, s) where x.c = t.conv_id and x.s = t.seq)`
    : sql``;
  return sql`select p.mid from (${directPending(u, d, floor)}) p${skipIds}
    union all select p.mid from (${timelinePending(u, d, floor)}${skipSeqs}) p`;
}

/** A message an acknowledgement names: its server id and, for a timeline entry, its conversation and number. */
export interface AckTarget {
  readonly serverId: bigint;
  readonly clientId: string;
  readonly chatType: string;
  readonly conv?: bigint;
  readonly seq?: bigint;
}

type TargetRow = { id: bigint | string; client_id: string; chat_type: string; conv_id: bigint | string | null; seq: bigint | string | null };

const toTarget = (r: TargetRow): AckTarget => ({
  serverId: BigInt(r.id),
  clientId: r.client_id,
  chatType: r.chat_type,
  ...(r.seq !== null ? { conv: BigInt(r.conv_id!), seq: BigInt(r.seq) } : {}),
});

/**
 * The user may acknowledge message `m` (alias of messages, `t` its timeline entry): one of its C2C sides, in
 * their inbox, or in one of their spans.
 */
const mayAck = (userId: bigint) => sql`((m.chat_type = 'C2C' and (m.from_id = ${userId} or m.to_id = ${userId}))
  or exists (select 1 from inbox i where i.user_id = ${userId} and i.message_id = m.id)
  or exists (select 1 from timeline_member s where s.conv_id = t.conv_id and s.user_id = ${userId}
    and t.seq > s.join_seq and t.seq <= coalesce(s.leave_seq, ${OPEN_SPAN})))`;

/** What a connecting device learns (InboxReader.openDevice). */
export interface DeviceOpen {
  /** user_device status; undefined when the device is not registered there. */
  readonly status: number | undefined;
  /** Whether its pending set is not empty (always false for a retired device). */
  readonly pending: boolean;
}

export interface OpenRequest {
  readonly userId: bigint;
  readonly deviceId: string;
  readonly fresh: bigint;
}

/**
 * InboxReader.openDevice's statement for distinct devices (exported for its
 * plan test): status, floor (recorded when first seen, with a cursor in each
 * of the user's groups) and whether anything is pending, one row per request
 * by `ord`.
 */
export function openDevicesQuery(reqs: readonly OpenRequest[]): SQL {
  return openDevicesSql(...openDevicesArgs(reqs));
}

/** openDevicesQuery's text, compiled once (it never varies), and its three array parameters for `reqs`. */
export function openDevicesStatement(reqs: readonly OpenRequest[]): Bound {
  return OPEN_DEVICES.bind(...openDevicesArgs(reqs));
}

const OPEN_DEVICES = new FixedStatement<[string, string, string]>((u, d, f) => openDevicesSql(u, d, f), 3);

/** Users, devices, fresh floors. */
function openDevicesArgs(reqs: readonly OpenRequest[]): [string, string, string] {
  return [
    arrayLiteral(reqs.map((r) => r.userId.toString())),
    arrayLiteral(reqs.map((r) => r.deviceId)),
    arrayLiteral(reqs.map((r) => r.fresh.toString())),
  ];
}

function openDevicesSql(users: unknown, devices: unknown, fresh: unknown): SQL {
  // Every per-device lookup is a lateral subquery behind `offset 0` (the planner may not pull it up into a join):
  // one primary-key probe per device, whatever the tables' statistics. As plain joins, a planner that had not
  // analyzed a growing delivery_device (a fresh deployment, a burst of new devices) hashed the whole table for
  // every batch of connects: O(devices ever seen) per handshake batch (bench/FINDINGS.md).
  return sql`with
      req as (select * from unnest(${users}::bigint[], ${devices}::text[], ${fresh}::bigint[])
        with ordinality as r(user_id, device_id, fresh, ord)),
      dev as (select r.ord, r.user_id, r.device_id, d.status, k.floor_id as known,
          coalesce((d.created_at - ${ID_EPOCH_MS}) << ${sql.raw(String(SHIFT))}, r.fresh) as computed,
          coalesce(d.status not in (0, -1), true) as ok
        from req r
        left join lateral (select d.status, d.created_at from ${userDevices} d
          where d.user_id = r.user_id and d.device_id = r.device_id offset 0) d on true
        left join lateral (select k.floor_id from ${deliveryDevices} k
          where k.user_id = r.user_id and k.device_id = r.device_id offset 0) k on true),
      ins as (insert into ${deliveryDevices} (user_id, device_id, floor_id)
        select dev.user_id, dev.device_id, dev.computed from dev where dev.ok and dev.known is null
        on conflict do nothing),
      cur as (insert into timeline_cursor (user_id, device_id, conv_id, seq)
        select dev.user_id, dev.device_id, s.conv_id, greatest(s.join_seq, coalesce((select t.seq from timeline t
            where t.conv_id = s.conv_id and t.message_id < dev.computed order by t.seq desc limit 1), 0))
        from dev cross join lateral (select s.conv_id, s.join_seq from timeline_member s
          where s.user_id = dev.user_id and s.leave_seq is null offset 0) s
        where dev.ok and dev.known is null
        on conflict do nothing),
      f as (select dev.*, coalesce(dev.known, dev.computed) as floor from dev)
      select f.ord, f.status, f.ok and (exists (${directPending(sql`f.user_id`, sql`f.device_id`, sql`f.floor`)})
        or exists (${timelinePending(sql`f.user_id`, sql`f.device_id`, sql`f.floor`)})) as pending
      from f`;
}

/**
 * Compaction's floor update (InboxReader.compact; exported for its plan test):
 * each device's floor up to its oldest pending inbox or C2C message and below
 * its first pending group entries (`firstTimelinePending`), never past `safe`
 * and never down.
 */
export function compactFloorsQuery(safe: bigint): SQL {
  return floorsQuery(sql`${safe}`, sql`${deliveryDevices} n`);
}

/**
 * The floors' watermark bound (docs/delivery.md "Floors"): the least of the
 * running nodes' watermarks (src/delivery/floors.ts), under which no message
 * can still commit, and never below compaction's settled bound (a node that
 * stopped without removing its row holds the floors back for SETTLE_MS). Its
 * two numbers are SQL values: parameters, or a FixedStatement's placeholders.
 */
function watermarkBoundOf(settled: unknown, seenSince: unknown): SQL {
  return sql`(select greatest(${settled}::bigint, coalesce(min(w.low_id), ${settled}::bigint)) from writer_watermark w
    where w.seen_at >= ${seenSince}::bigint)`;
}

/** The settled id floor and the oldest watermark that still counts, at `nowMs`. */
const watermarkArgs = (nowMs: number): [string, string] => [idFloorForTime(nowMs - SETTLE_MS).toString(), String(nowMs - SETTLE_MS)];

/**
 * The floor update for some devices (InboxReader.advanceFloors; exported for
 * its plan test): compaction's rule, bounded by the nodes' watermarks instead
 * of the settled time, one primary-key probe per device.
 */
export function advanceFloorsQuery(devices: readonly DeviceKey[], nowMs: number): SQL {
  return advanceFloorsSql(...advanceFloorsArgs(devices, nowMs));
}

function advanceFloorsSql(users: unknown, ids: unknown, settled: unknown, seenSince: unknown): SQL {
  return floorsQuery(
    watermarkBoundOf(settled, seenSince),
    sql`unnest(${users}::bigint[], ${ids}::text[]) as r(user_id, device_id)
      cross join lateral (select k.* from ${deliveryDevices} k where k.user_id = r.user_id and k.device_id = r.device_id offset 0) n`,
  );
}

/** Users, devices, and the watermark bound's two numbers. */
function advanceFloorsArgs(devices: readonly DeviceKey[], nowMs: number): [string, string, string, string] {
  return [arrayLiteral(devices.map((d) => d.userId.toString())), arrayLiteral(devices.map((d) => d.deviceId)), ...watermarkArgs(nowMs)];
}

/**
 * advanceFloorsQuery compiled once: it runs every floor tick (each second under load), and drizzle compiling its
 * text each time made drizzle's chunk mapper hot enough to be compiled by the optimising JIT in the middle of a run,
 * one 125 ms compile on a core of two (bench/FINDINGS.md, twenty-third section).
 */
const ADVANCE_FLOORS = new FixedStatement<[string, string, string, string]>((u, i, s, w) => advanceFloorsSql(u, i, s, w), 4);

/** Floors of the devices `from` names (rows `n` of delivery_device) moved up to their first pending message, at most to `safe`. */
function floorsQuery(safe: SQL, from: SQL): SQL {
  const [u, d, floor] = [sql`n.user_id`, sql`n.device_id`, sql`n.floor_id`];
  const shift = sql.raw(String(SHIFT));
  // Only rows whose floor moves are written (an update of every device each run wrote a row version apiece). Never
  // down: the timeline bound may fall under the floor (an entry minted just above it), and a lower floor would make
  // older messages pending again (those before the device was registered, say). `offset 0`: the bound and each
  // device's new floor are computed once (pulled up, the planner evaluated them again in the update's filter).
  const direct = directFloor(u, d, floor, sql`b.safe`);
  return sql`update ${deliveryDevices} d set floor_id = x.floor
    from (select n.user_id, n.device_id, least(${direct.best},
        coalesce((((${firstTimelinePending(u, d, floor)}) >> ${shift}) - ${SETTLE_MS}) << ${shift}, b.safe)) as floor
      from ${from} cross join (select (${safe})::bigint as safe offset 0) b
      ${direct.joins}
      where n.floor_id < b.safe offset 0) x
    where d.user_id = x.user_id and d.device_id = x.device_id and x.floor > d.floor_id`;
}

/** A user's device. */
export interface DeviceKey {
  readonly userId: bigint;
  readonly deviceId: string;
}

const NOT_OPENED: DeviceOpen = { status: undefined, pending: false };

/** Devices per openDevice statement (three array parameters, whatever the count). */
export const OPEN_BATCH_MAX = 500;

export class InboxReader {
  constructor(private readonly store: Store) {}

  /**
   * Records a device's floor the first time it is seen: its registration time
   * in user_device, else `fresh` (an id minted now: everything stored before
   * it is older). Messages stored before that are not pending for it.
   * The same statement as a connect (openDevice).
   */
  async ensureDevice(userId: bigint, deviceId: string, fresh: bigint): Promise<void> {
    await this.openDevice(userId, deviceId, fresh);
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
      const out = await this.openDevices(reqs);
      return new Map(keys.map((k, i) => [k, out[i]!]));
    },
    NOT_OPENED,
    OPEN_BATCH_MAX,
    // Gathered on both stores: a connect's floor and pending check is not on the handshake's path, and a burst of
    // connects in one turn then shares one statement instead of starting one for the first alone.
    () => true,
  );

  /**
   * Connects' device checks (openDevice), in statements of up to
   * OPEN_BATCH_MAX devices: an answer per request, in order. A device asked
   * for twice shares one answer, its first request's (`fresh` included).
   *
   * Within a statement a floor inserted by a concurrent statement is not
   * visible to its snapshot, so the floor computed there stands in (the same
   * value, or a fresher one). A device seen for the first time also gets a
   * cursor in each of its user's groups, just below the first entry stored
   * since its floor (its cursor then runs on without a hole).
   */
  async openDevices(reqs: readonly OpenRequest[]): Promise<DeviceOpen[]> {
    const out: DeviceOpen[] = new Array(reqs.length);
    for (let from = 0; from < reqs.length; from += OPEN_BATCH_MAX) {
      const part = reqs.slice(from, from + OPEN_BATCH_MAX);
      // Distinct devices per statement: where each request's answer is (a repeat points at the first).
      const first = new Map<string, number>();
      const slot: number[] = new Array(part.length);
      const distinct: OpenRequest[] = [];
      for (let i = 0; i < part.length; i++) {
        const key = `${part[i]!.userId}\u0000${part[i]!.deviceId}`;
        let at = first.get(key);
        if (at === undefined) first.set(key, (at = distinct.push(part[i]!) - 1));
        slot[i] = at;
      }
      const { text, params } = openDevicesStatement(distinct);
      const rows = await this.store.query<{ ord: number | bigint | string; status: number | null; pending: boolean }>(text, params);
      const answers: DeviceOpen[] = new Array(distinct.length).fill(NOT_OPENED);
      for (const r of rows) answers[Number(r.ord) - 1] = { status: r.status == null ? undefined : Number(r.status), pending: r.pending === true };
      for (let i = 0; i < part.length; i++) out[from + i] = answers[slot[i]!]!;
    }
    return out;
  }

  async hasPending(userId: bigint, deviceId: string, exclude?: readonly MarkRow[]): Promise<boolean> {
    const rows = await this.store.rows(sql`select 1 from (${pendingIds(userId, deviceId, exclude)}) p limit 1`);
    return rows.length > 0;
  }

  /** Oldest first (by server id): at most `limit` messages and about `budget` bytes of stored text. */
  async pending(userId: bigint, deviceId: string, limit: number, exclude?: readonly MarkRow[], budget = Number.MAX_SAFE_INTEGER): Promise<MessagePage> {
    const page = this.store.db
      .select(budgetColumns(sql`${messages.id}`, budget))
      .from(messages)
      .where(sql`${messages.id} in (${pendingIds(userId, deviceId, exclude)})`)
      .orderBy(messages.id)
      .limit(limit)
      .as("page");
    return pageOf(await this.store.db.select().from(page).where(sql`${page.fits}`).orderBy(asc(page.id)));
  }

  /**
   * The messages with these §2.8 ids that `userId` may acknowledge (in the
   * user's inbox, or a timeline entry within one of the user's spans). Found
   * by chat type and tsid (`idLookup`), so an unknown id costs one index
   * probe. An id that two conversations hold (a tsid is unique per
   * conversation only) names the oldest such message.
   */
  async resolve(userId: bigint, ids: readonly string[]): Promise<Map<string, AckTarget>> {
    const out = new Map<string, AckTarget>();
    const query = resolveQuery(userId, ids);
    if (!query) return out;
    const rows = await this.store.rows<TargetRow>(query);
    for (const r of rows) if (!out.has(r.client_id)) out.set(r.client_id, toTarget(r));
    return out;
  }

  /**
   * A frame ACK names only the direction and the tsid segment: among the
   * messages of that direction with that segment the user may acknowledge
   * (an index probe), the oldest one this device has not acknowledged yet,
   * else (a repeated ACK) the oldest.
   */
  async resolveTsid(userId: bigint, deviceId: string, type: ChatType, tsid: string): Promise<AckTarget | undefined> {
    const rows = await this.store.rows<TargetRow>(resolveTsidQuery(userId, deviceId, type, tsid));
    return rows[0] && toTarget(rows[0]);
  }

  /** Server id of a C2C message of one conversation named by its §2.8 id (history's before_id; `where` says C2C). */
  async idInConversation(where: SQL, clientId: string): Promise<bigint | undefined> {
    const rows = await this.store.db
      .select({ id: messages.id })
      .from(messages)
      .where(and(where, sql`split_part(${messages.clientId}, '.', 2) = ${tsidOf(clientId)}`, eq(messages.clientId, clientId)))
      .limit(1);
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

  /** Timeline number of a group message named by its §2.8 id (history's before_id). */
  async seqInGroup(groupId: bigint, clientId: string): Promise<bigint | undefined> {
    const rows = await this.store.db
      .select({ seq: timeline.seq })
      .from(timeline)
      .innerJoin(messages, eq(messages.id, timeline.messageId))
      .where(
        and(
          eq(timeline.convId, groupId),
          eq(messages.chatType, "C2G"),
          sql`split_part(${messages.clientId}, '.', 2) = ${tsidOf(clientId)}`,
          eq(messages.clientId, clientId),
        ),
      )
      .limit(1);
    return rows[0]?.seq;
  }

  /**
   * A group's messages the user sees (within the user's spans: nothing from
   * before they joined or after they left), newest first, below `beforeSeq`
   * when given: at most `limit` messages and about `budget` bytes of stored text.
   */
  async groupHistory(userId: bigint, groupId: bigint, beforeSeq: bigint | undefined, limit: number, budget = Number.MAX_SAFE_INTEGER): Promise<MessagePage> {
    const page = this.store.db
      .select({ ...budgetColumns(sql`${timeline.seq} desc`, budget), seq: timeline.seq })
      .from(timeline)
      .innerJoin(messages, eq(messages.id, timeline.messageId))
      .where(
        and(
          eq(timeline.convId, groupId),
          beforeSeq === undefined ? undefined : lt(timeline.seq, beforeSeq),
          sql`exists (select 1 from timeline_member s where s.conv_id = ${groupId} and s.user_id = ${userId}
            and ${timeline.seq} > s.join_seq and ${timeline.seq} <= coalesce(s.leave_seq, ${OPEN_SPAN}))`,
        ),
      )
      .orderBy(desc(timeline.seq))
      .limit(limit)
      .as("page");
    return pageOf(await this.store.db.select().from(page).where(sql`${page.fits}`).orderBy(desc(page.seq)));
  }

  /** user_device status of a device; undefined when it is not registered there. */
  async deviceStatus(userId: bigint, deviceId: string): Promise<number | undefined> {
    const rows = await this.store.db
      .select({ status: userDevices.status })
      .from(userDevices)
      .where(and(eq(userDevices.userId, userId), eq(userDevices.deviceId, deviceId)));
    return rows[0]?.status;
  }

  /**
   * Whether a device's floor is settled: recorded, or bound to be its
   * registration time (user_device) whoever records it. Else the first to
   * record it sets it (a connect, or an offline pull: Engine.pullFloor).
   */
  async floorSettled(userId: bigint, deviceId: string): Promise<boolean> {
    const rows = await this.store.rows<{ settled: boolean }>(sql`select
      exists (select 1 from ${deliveryDevices} where ${deliveryDevices.userId} = ${userId} and ${deliveryDevices.deviceId} = ${deviceId})
      or exists (select 1 from ${userDevices} where ${userDevices.userId} = ${userId} and ${userDevices.deviceId} = ${deviceId}) as settled`);
    return rows[0]?.settled === true;
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
   * marks below the floors. Keeps the pending-set scans short. The floor bounds
   * the device's group entries too (`firstTimelinePending`).
   */
  async compact(settledMs: number): Promise<void> {
    await this.store.db.transaction(async (tx) => {
      if (!(await ourTurn(tx, JOB_LOCKS.compact))) return;
      await tx.execute(compactFloorsQuery(idFloorForTime(settledMs)));
      await tx.execute(sql`delete from ${deliveryMarks} m using ${deliveryDevices} d
        where m.user_id = d.user_id and m.device_id = d.device_id and m.message_id < d.floor_id`);
      // Entries pruned under a cursor can never be acknowledged: the cursor moves past them (else it would wait forever).
      await tx.execute(sql`update timeline_cursor c set seq = f.low,
          above = c.above - int8multirange(int8range(null, f.low, '[]'))
        from (select h.conv_id, coalesce((select min(t.seq) from timeline t where t.conv_id = h.conv_id) - 1, h.last_seq) as low
          from timeline_head h) f
        where f.conv_id = c.conv_id and f.low > c.seq`);
    });
  }

  /**
   * Moves these devices' floors up past what they acknowledged, as far as the
   * nodes' watermarks allow (src/delivery/floors.ts): a reconnect's pending
   * check then walks what is unacknowledged, not every message acknowledged
   * since the last compaction. Marks under the floors stay for compaction.
   */
  async advanceFloors(devices: readonly DeviceKey[], nowMs: number): Promise<void> {
    if (!devices.length) return;
    const { text, params } = ADVANCE_FLOORS.bind(...advanceFloorsArgs(devices, nowMs));
    await this.store.query(text, params);
  }

  /** Deletes messages (with their inbox rows and marks) minted before `beforeMs`; ids are time-ordered. */
  async prune(beforeMs: number): Promise<number> {
    const floor = idFloorForTime(beforeMs);
    return this.store.db.transaction(async (tx) => {
      if (!(await ourTurn(tx, JOB_LOCKS.prune))) return 0;
      await tx.delete(deliveryMarks).where(lt(deliveryMarks.messageId, floor));
      await tx.delete(inbox).where(lt(inbox.messageId, floor));
      await tx.delete(timeline).where(lt(timeline.messageId, floor));
      const gone = await tx.delete(messages).where(lt(messages.id, floor)).returning({ id: messages.id });
      return gone.length;
    });
  }
}

/**
 * Transaction-scoped advisory locks of the prune and the compaction (the
 * migration and node-lease locks are 0x1b15 and 0x1b16): every node runs both
 * on its own timer, and nodes sharing a database would otherwise run the same
 * whole-table statements at once, each waiting on the other's row locks to do
 * the work again. A node that finds the job running skips its turn.
 */
export const JOB_LOCKS = { prune: 0x1b17, compact: 0x1b18 } as const;

async function ourTurn(tx: { execute(q: SQL): Promise<unknown> }, key: number): Promise<boolean> {
  const [row] = rowsOf<{ ok: boolean }>(await tx.execute(sql`select pg_try_advisory_xact_lock(${key}) as ok`));
  return row?.ok === true;
}

/** The tsid segment of a §2.8 id `<TYPE>.<tsid>.<ms>.<random>` (what the tsid indexes lead with). */
export const tsidOf = (id: string): string => id.split(".", 2)[1] ?? "";

/**
 * `m` (messages) is one of `ids`: per TYPE segment (always the chat type:
 * validation), `chat_type = TYPE and tsid = any(…) and client_id = any(…)`,
 * the form each type's tsid index serves. Undefined when there is nothing to look up.
 */
function idLookup(ids: readonly string[]): SQL | undefined {
  const byType = new Map<string, string[]>();
  for (const id of ids) {
    const type = id.slice(0, id.indexOf("."));
    const list = byType.get(type);
    if (list) list.push(id);
    else byType.set(type, [id]);
  }
  const parts = [...byType].map(([type, list]) => sql`(m.chat_type = ${type}
    and split_part(m.client_id, '.', 2) = any(${sql.param(list.map(tsidOf))}::text[])
    and m.client_id = any(${sql.param(list)}::text[]))`);
  return parts.length ? sql.join(parts, sql` or `) : undefined;
}

/** InboxReader.resolve's statement (exported for its plan test). */
export function resolveQuery(userId: bigint, ids: readonly string[]): SQL | undefined {
  const lookup = idLookup(ids);
  return lookup && sql`select m.id, m.client_id, m.chat_type, t.conv_id, t.seq
    from messages m left join timeline t on t.message_id = m.id
    where (${lookup}) and ${mayAck(userId)}
    order by m.id`;
}

/** InboxReader.resolveTsid's statement (exported for its plan test): the device's unacknowledged one first. */
export function resolveTsidQuery(userId: bigint, deviceId: string, type: ChatType, tsid: string): SQL {
  return sql`select m.id, m.client_id, m.chat_type, t.conv_id, t.seq
    from messages m left join timeline t on t.message_id = m.id
    where split_part(m.client_id, '.', 2) = ${tsid} and m.chat_type = ${type} and ${mayAck(userId)}
    order by (case when t.seq is null
        then exists (select 1 from delivery_mark k where k.user_id = ${userId} and k.device_id = ${deviceId} and k.message_id = m.id)
          or (m.chat_type = 'C2C' and ${sentFrom("m", sql`${userId}`, sql`${deviceId}`)})
          -- Under the floor: acknowledged (or never the device's) even once compaction deleted its mark.
          or m.id < ${floorOf(userId, deviceId)}
        else exists (select 1 from timeline_cursor c where c.user_id = ${userId} and c.device_id = ${deviceId}
          and c.conv_id = t.conv_id and (t.seq <= c.seq or c.above @> t.seq)) end), m.id
    limit 1`;
}

/** The condition selecting one C2C conversation's messages (uses the history index). */
export function conversationWhere(userId: bigint, peerId: bigint): SQL {
  const [a, b] = userId < peerId ? [userId, peerId] : [peerId, userId];
  return sql`${messages.chatType} = 'C2C' and least(${messages.fromId}, ${messages.toId}) = ${a}
    and greatest(${messages.fromId}, ${messages.toId}) = ${b}`;
}


/** user_device status 0 (revoked) and -1 (destroyed): such a device gets no pushes (§3.1). */
export const isRetired = (status: number | undefined): boolean => status === 0 || status === -1;
