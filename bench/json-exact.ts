/**
 * What parsing a C2C uplink's JSON costs with its ids exact (src/protocol/json.ts `parseJson`), against a reviver
 * reading each literal's source (how it was done before) and the plain native parse of the same text: ns per parse
 * and heap cells allocated per parse (`heapStats().objectTypeCounts` grows with garbage until a collection). A
 * probe, like alloc-faults.ts: it prints, it writes no result file.
 *
 *   bun bench/json-exact.ts
 */
import { heapStats } from "bun:jsc";
import { exactReviver, parseJson } from "../src/protocol/json.ts";

const text =
  `{"id":"C2C.425711869116481537.1795854123043.bench","type":"C2C","from":1152921504606846977,` +
  `"to":1152921504606846979,"payload":{"text":"${"x".repeat(64)}"},"msg_type":"text"}`;

const N = 200_000;
const cells = () => Object.values(heapStats().objectTypeCounts).reduce((a, b) => a + b, 0);
for (const [label, parse] of [
  ["parseJson (exact ids)", () => parseJson(text, 64)],
  ["reviver (exact ids)", () => JSON.parse(text, exactReviver as never)],
  ["JSON.parse (ids rounded)", () => JSON.parse(text)],
] as const) {
  for (let i = 0; i < 20_000; i++) parse();
  const t = performance.now();
  for (let i = 0; i < N; i++) parse();
  const ns = ((performance.now() - t) * 1e6) / N;
  Bun.gc(true);
  const before = cells();
  for (let i = 0; i < 2000; i++) parse();
  console.log(`${label.padEnd(26)} ${ns.toFixed(0).padStart(6)} ns  ${((cells() - before) / 2000).toFixed(1).padStart(5)} cells`);
}
