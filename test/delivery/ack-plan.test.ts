/**
 * An acknowledgement of an unknown id must cost an index probe, not a scan
 * (issue 14.4): on PostgreSQL, with many messages of every type and fresh
 * statistics, every ack lookup (full id of each type, frame ACK by tsid)
 * reaches `messages` through a tsid index.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql, type SQL } from "drizzle-orm";
import { resolveQuery, resolveTsidQuery } from "../../src/delivery/inbox.ts";
import { resendOf } from "../../src/delivery/writer.ts";
import { messages } from "../../src/db/schema/index.ts";
import type { ChatType } from "../../src/delivery/ports.ts";
import { explainPlan, freshStore, type TestStore } from "../support/stores.ts";

const ME = 1001n;

describe("ack lookups use an index [postgres]", () => {
  let ts: TestStore;
  beforeAll(async () => {
    ts = await freshStore("postgres");
    for (const [type, base] of [["C2C", 0], ["C2G", 100000], ["S2C", 200000], ["C2S", 300000]] as const) {
      await ts.store.db.execute(sql`insert into messages (id, client_id, chat_type, from_id, to_id, payload, server_ts)
        select ${base} + i, ${type} || '.' || (${base} + i) || '.1.r', ${type}, 1000 + i % 400, 5000 + (i * 7) % 400, '{}', 1700000000000 + i
        from generate_series(1, 10000) i`);
    }
    await ts.store.db.execute(sql`insert into inbox (user_id, message_id) select 1000 + i % 400, i from generate_series(1, 10000) i`);
    await ts.store.db.execute(sql`analyze messages`);
    await ts.store.db.execute(sql`analyze inbox`);
  });
  afterAll(() => ts.dispose());

  const plan = (q: SQL) => explainPlan(ts.store, q);

  test.each(["C2C", "C2G", "S2C", "C2S"] as ChatType[])("%s: by full id and by tsid alone", async (type) => {
    for (const q of [resolveQuery(ME, [`${type}.99999999.1.unknown`])!, resolveTsidQuery(ME, "d1", type, "99999999")]) {
      const text = await plan(q);
      expect(text).toMatch(/Index (Only )?Scan using messages_(tsid_idx|c2c_tsid_uq|c2g_tsid_uq) on messages|Bitmap Index Scan on messages_(tsid_idx|c2c_tsid_uq|c2g_tsid_uq)/);
      expect(text).not.toMatch(/Seq Scan on messages/);
    }
  });

  // A batch refused by a unique index looks its resends up: through the index that refused them, never a scan.
  test.each([
    ["C2C", "messages_c2c_tsid_uq"],
    ["C2G", "messages_c2g_tsid_uq"],
    ["S2C", "messages_sender_client_id_uq"],
    ["C2S", "messages_sender_client_id_uq"],
  ] as const)("%s: a resend's stored row", async (type, index) => {
    const q = sql`select ${messages.id} from ${messages} where ${resendOf({ chatType: type, fromId: 1001n, toId: 5007n, clientId: `${type}.99999999.1.r` })}`;
    const text = await plan(q);
    expect(text).toMatch(new RegExp(`Index (Only )?Scan using ${index} on messages|Bitmap Index Scan on ${index}`));
    expect(text).not.toMatch(/Seq Scan on messages/);
  });

  test("several types in one offline_ack: one probe per type", async () => {
    const text = await plan(resolveQuery(ME, ["C2C.1.1.a", "C2G.2.1.b", "S2C.3.1.c"])!);
    expect(text).not.toMatch(/Seq Scan on messages/);
  });
});
