/**
 * metrics-cost: what one metric update costs, Ibis's registry against
 * prom-client (docs/operations.md "Metrics"). Best and median of 5 runs of
 * 5 M calls each, after a warm-up; a CPU microbenchmark, so a busy box shifts
 * both sides alike.
 *
 *   bun bench/metrics-cost.ts
 */
import client from "prom-client";
import { CounterFamily, Histogram } from "../src/metrics/registry.ts";
import { metrics } from "../src/metrics/index.ts";

const N = 5_000_000;
const types = ["C2C", "C2G", "C2S", "S2C"];
let k = 0;

function bench(name: string, f: () => void): void {
  for (let i = 0; i < 100_000; i++) f();
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t = Bun.nanoseconds();
    for (let i = 0; i < N; i++) f();
    runs.push((Bun.nanoseconds() - t) / N);
  }
  runs.sort((a, b) => a - b);
  console.log(`${name.padEnd(42)} best ${runs[0]!.toFixed(2)} ns   median ${runs[2]!.toFixed(2)} ns`);
}

const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const pc = new client.Counter({ name: "m_total", help: "h", labelNames: ["type"] });
const pcChild = pc.labels({ type: "C2C" });
const pcPlain = new client.Counter({ name: "p_total", help: "h" });
const pcHist = new client.Histogram({ name: "h_seconds", help: "h", buckets: SECONDS });
const ours = new CounterFamily("n_total", "h").child({ type: "C2C" });
const ourHist = new Histogram("o_seconds", "h", SECONDS);

bench("prom-client counter.inc({type})", () => pc.inc({ type: types[k++ & 3]! }));
bench("prom-client child.inc()", () => pcChild.inc());
bench("prom-client unlabelled inc()", () => pcPlain.inc());
bench("ibis Counter.inc()", () => ours.inc());
bench("ibis metrics.message(type)", () => metrics.message(types[k++ & 3]!));
bench("prom-client histogram.observe()", () => pcHist.observe(0.003));
bench("ibis Histogram.observe()", () => ourHist.observe(0.003));
