import { sql } from "drizzle-orm";
import { MAX_NODE_ID } from "../ids/tsid.ts";
import { rowsOf, type Store } from "../db/store.ts";

export const LEASE_TTL_MS = 60_000;

export interface NodeLease {
  readonly nodeId: number;
  renew(): Promise<void>;
  release(): Promise<void>;
}

/**
 * Leases the lowest node id that is free or expired, so nodes started without
 * IBIS_NODE_ID still mint unique ids. The lease is renewed well inside its TTL
 * by the caller's timer; a crashed node's slot frees itself after the TTL.
 */
export async function leaseNodeId(store: Store, holder: string, now = Date.now): Promise<NodeLease> {
  const nodeId = await store.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${0x1b16})`);
    const t = now();
    const rows = rowsOf<{ node_id: number }>(
      await tx.execute(sql`
        select s.n as node_id from generate_series(0, ${MAX_NODE_ID}) as s(n)
        left join node_lease l on l.node_id = s.n
        where l.node_id is null or l.expires_at < ${t}
        order by s.n limit 1`),
    );
    const free = rows[0];
    if (!free) throw new Error(`all ${MAX_NODE_ID + 1} node ids are leased`);
    const id = Number(free.node_id);
    await tx.execute(sql`
      insert into node_lease (node_id, holder, expires_at) values (${id}, ${holder}, ${t + LEASE_TTL_MS})
      on conflict (node_id) do update set holder = excluded.holder, expires_at = excluded.expires_at`);
    return id;
  });
  return {
    nodeId,
    renew: async () => {
      await store.db.execute(
        sql`update node_lease set expires_at = ${now() + LEASE_TTL_MS} where node_id = ${nodeId} and holder = ${holder}`,
      );
    },
    release: async () => {
      await store.db.execute(sql`delete from node_lease where node_id = ${nodeId} and holder = ${holder}`);
    },
  };
}
