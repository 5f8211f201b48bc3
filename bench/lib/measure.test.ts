import { describe, expect, test } from "bun:test";
import type { Round } from "./measure.ts";
import { cpuPerMessage, pairedRounds } from "./measure.ts";

const round = (rate: number, server: number, client: number, db?: number, ctxtPerS?: number, serverSys?: number): Round => ({
  rate,
  latency: { count: 0, min_us: 0, mean_us: 0, p50_us: 0, p90_us: 0, p99_us: 0, p999_us: 0, max_us: 0 },
  server_cpu_pct: server,
  ...(serverSys === undefined ? {} : { server_sys_pct: serverSys }),
  server_rss_kb: 0,
  server_minor_faults: 0,
  ...(db === undefined ? {} : { db_cpu_pct: db }),
  ...(ctxtPerS === undefined ? {} : { machine_ctxt_per_s: ctxtPerS }),
  client_cpu_pct: client,
  clients: [],
  hist: { b: [], n: 0, min: 0, max: 0, sum: 0 },
});

describe("cpuPerMessage: a round's CPU % over its rate, µs", () => {
  // rate, server %, client %, db % → server µs, db µs, client µs
  const table: [number, number, number, number, number, number, number][] = [
    [10_000, 100, 50, 80, 100, 80, 50], // a whole core at 10,000 msg/s is 100 µs a message
    [5_000, 77.3, 31.6, 60, 154.6, 120, 63.2],
    [44_000, 85, 95, 0.2, 19.3, 0, 21.6], // a relay: PostgreSQL idle
    [1, 100, 0, 0, 1_000_000, 0, 0],
  ];
  for (const [rate, server, client, db, serverUs, dbUs, clientUs] of table) {
    test(`${rate} msg/s, server ${server} %, client ${client} %, db ${db} % → ${serverUs} / ${dbUs} / ${clientUs} µs`, () => {
      expect(cpuPerMessage(round(rate, server, client, db))).toEqual({
        server_us: serverUs,
        server_sys_us: null,
        db_us: dbUs,
        client_us: clientUs,
        switches: null,
      });
    });
  }

  test("context switches per message: the machine's per second over the rate", () => {
    expect(cpuPerMessage(round(6_500, 80, 35, 60, 7_995)).switches).toBe(1.23); // an Ibis closed loop on the PVM guest
    expect(cpuPerMessage(round(27_576, 82, 94, 0, 3_018)).switches).toBe(0.11); // the relay's
  });

  test("results written before the database was metered: no database figure; a round with no messages does not divide by zero", () => {
    expect(cpuPerMessage(round(2_000, 40, 10)).db_us).toBeNull();
    expect(cpuPerMessage(round(0, 40, 10, 5, 300))).toEqual({ server_us: 400_000, server_sys_us: null, db_us: 50_000, client_us: 100_000, switches: 300 });
  });

  test("the server's kernel part per message, from the same rate (this machine's relay and Ibis node, tenth section)", () => {
    expect(cpuPerMessage(round(28_340, 85, 90, 0.2, 5_000, 70)).server_sys_us).toBe(24.7); // the relay: mostly syscalls
    expect(cpuPerMessage(round(7_000, 70, 35, 40, 8_500, 25)).server_sys_us).toBe(35.7); // Ibis: mostly its own code
  });
});

describe("pairedRounds: two nodes' rounds side by side", () => {
  test("per round the rate ratio and both sides' CPU per message; medians last (mean of the middle two when even)", () => {
    // rate, server %, client %, db %: 100 µs of node + 40 + 20 at 10,000 msg/s is 160 µs a message in all
    const a = [round(10_000, 100, 20, 40), round(8_000, 100, 20, 40)];
    const b = [round(12_000, 96, 24, 36), round(6_000, 90, 18, 30)];
    const t = pairedRounds(a, b, "as configured", "DEPTH=1");
    expect(t.columns[3]).toBe("DEPTH=1 / as configured");
    expect(t.rows).toEqual([
      [1, 10_000, 12_000, 1.2, 100, 80, 160, 130],
      [2, 8_000, 6_000, 0.75, 125, 150, 200, 230],
      ["median", 9_000, 9_000, 0.975, 112.5, 115, 180, 180],
    ]);
  });

  test("a round one side lacks is left out", () => {
    const t = pairedRounds([round(1_000, 10, 10, 0)], [round(1_000, 10, 10, 0), round(2_000, 10, 10, 0)], "a", "b");
    expect(t.rows.map((r) => r[0])).toEqual([1, "median"]);
  });
});
