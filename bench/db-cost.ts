/**
 * db-cost: the database's CPU per stored C2C message, by batch size, without
 * the transport: the node's own DeliveryWriter writes `--n` messages in batches
 * of B (each message its row alone, naming the sending device, as the engine
 * queues a C2C), then the receivers' acks go through writeMarks in
 * batches of `--marks`. PostgreSQL: CPU of every `postgres` process (backends,
 * WAL writer) from /proc, on an otherwise idle server; PGlite (memory://): this
 * process's CPU, the database runs inside it (so it includes the writer's own JS). What a batch's fixed cost is
 * (B = 1) and what a message adds (large B): bench/FINDINGS.md, issue 19.
 *
 *   bun bench/db-cost.ts [--batches 1,5,20,100] [--n 6000] [--marks 200] [--store both|postgres|memory]
 */
import { openStore, type Store } from "../src/db/store.ts";
import { DeliveryWriter, writeMarks, type MarkRow, type StoreItem } from "../src/delivery/writer.ts";
import { num, nums, parseArgs, str } from "./lib/args.ts";
import { freshDatabase } from "./lib/ibis.ts";
import { cpuMsOfCommand } from "./lib/procstat.ts";

const args = parseArgs();
const batches = nums(args, "batches", [1, 5, 20, 100]);
const n = num(args, "n", 6000);
const marksPer = num(args, "marks", 200);
const which = str(args, "store", "both");

let next = 1n << 60n;
const payload = JSON.stringify({ text: "x".repeat(48) }); // ~64 B, as bench c2c sends
const item = (pair: number): StoreItem => {
  const id = next++;
  const from = 1000n + BigInt(pair) * 2n;
  return {
    row: { id, clientId: `C2C.${id}.1764000000000.r`, chatType: "C2C", fromId: from, toId: from + 1n, msgType: "text", payload, serverTs: Date.now(), fromDevice: "a" },
    inbox: [],
    marks: [],
  };
};

/** CPU (ms) the database spent while `run` ran. */
type Meter = () => number;

async function measure(store: Store, cpu: Meter, label: string): Promise<void> {
  const writer = new DeliveryWriter(store, 512);
  // The first pass (batches of 20) warms caches and plans and is not printed.
  for (const [pass, b] of [20, ...batches].entries()) {
    const rounds = Math.max(1, Math.ceil(n / b));
    const warm = pass === 0;
    const stored: bigint[] = [];
    const c0 = cpu();
    const t0 = performance.now();
    for (let r = 0; r < rounds; r++) {
      const items = Array.from({ length: b }, (_, i) => item(i % 50));
      await Promise.all(items.map((i) => writer.messages.add(i)));
      for (const i of items) stored.push(i.row.id);
    }
    const msgCpu = (cpu() - c0) * 1000;
    const msgWall = (performance.now() - t0) * 1000;
    // The receivers' acks of those messages, in ledger-sized batches.
    const c1 = cpu();
    for (let i = 0; i < stored.length; i += marksPer) {
      const marks: MarkRow[] = stored.slice(i, i + marksPer).map((id, k) => ({ userId: 1001n + BigInt((i + k) % 50) * 2n, deviceId: "b", messageId: id }));
      await writeMarks(store, marks);
    }
    const markCpu = (cpu() - c1) * 1000;
    if (warm) continue;
    const m = rounds * b;
    console.log([label, b, (msgCpu / m).toFixed(1), (msgWall / m).toFixed(1), ((msgWall / rounds) / 1000).toFixed(2), (markCpu / m).toFixed(1)].join("\t"));
  }
}

console.log(["store", "batch", "db CPU µs/msg", "wall µs/msg", "ms/batch", "ack mark CPU µs/ack"].join("\t"));
if (which === "both" || which === "postgres") {
  const db = await freshDatabase();
  const store = await openStore({ url: db.url, poolSize: 2 });
  try {
    await measure(store, () => cpuMsOfCommand("postgres"), "postgres");
  } finally {
    await store.close();
    await db.drop();
  }
}
if (which === "both" || which === "memory") {
  const store = await openStore({ url: "memory://" });
  const self = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  try {
    await measure(store, self, "pglite (memory://)");
  } finally {
    await store.close();
  }
}
