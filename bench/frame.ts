/**
 * svc.v2 frame codec micro-benchmark: the server's header decode (zero-copy
 * above 1,000 bytes: the payload is a view; a smaller frame's payload is copied,
 * which in JavaScriptCore costs less than a view of it: `decodeUplinkFrame` in
 * src/protocol/frame.ts) and encode,
 * for payloads from 16 B to 16 MiB. Decode time must not grow with the payload:
 * the 16 MiB / 16 B decode ratio is printed, and 16 MiB / 1 KiB (both views, ≈ 1);
 * 991 B is the largest payload copied.
 * Writes bench/results/frame-<date>.json like every scenario (and the RESULTS.md
 * section with its chart). BENCH_MS sets the CPU time per case in ms (default 150).
 */
import { do_not_optimize, measure } from "mitata";
import { FrameType, decodeUplinkFrame, encodeFrame, writeFrameHeader } from "../src/protocol/frame.ts";
import { common, finish } from "./lib/scenario.ts";

const c = common(1);

const SIZES: [string, number][] = [
  ["16 B", 16],
  ["991 B", 991],
  ["1 KiB", 1024],
  ["64 KiB", 64 * 1024],
  ["1 MiB", 1024 * 1024],
  ["16 MiB", 16 * 1024 * 1024],
];
const cpuMs = Number(process.env.BENCH_MS ?? (c.smoke ? 20 : 150));
const OPS = ["decode", "header encode", "encode (copy)"] as const;
const opts = { min_cpu_time: cpuMs * 1e6, max_samples: 1e9 };

interface Row {
  op: string;
  size: string;
  bytes: number;
  avg_ns: number;
  p50_ns: number;
  p99_ns: number;
  samples: number;
}
const rows: Row[] = [];

async function run(op: string, size: string, bytes: number, fn: () => unknown) {
  const s = await measure(fn, opts);
  const row = { op, size, bytes, avg_ns: s.avg, p50_ns: s.p50, p99_ns: s.p99, samples: s.samples.length };
  rows.push(row);
  console.log(`${op.padEnd(18)} ${size.padStart(7)}  ${s.avg.toFixed(1).padStart(12)} ns/frame (p50 ${s.p50.toFixed(1)}, p99 ${s.p99.toFixed(1)})`);
}

for (const [size, bytes] of SIZES) {
  const payload = new Uint8Array(bytes).fill(0x61);
  const frame = encodeFrame(FrameType.MsgC2C, payload);
  const header = new Uint8Array(9);
  await run("decode", size, bytes, () => {
    const f = decodeUplinkFrame(frame); // the server's decode
    do_not_optimize(f);
    return f;
  });
  await run("header encode", size, bytes, () => {
    writeFrameHeader(header, 0, FrameType.MsgC2C, 0, bytes);
    do_not_optimize(header);
  });
  await run("encode (copy)", size, bytes, () => {
    const out = encodeFrame(FrameType.MsgC2C, payload);
    do_not_optimize(out);
    return out;
  });
}

const p50 = (op: string, size: string) => rows.find((r) => r.op === op && r.size === size)!.p50_ns;
const ratio = p50("decode", "16 MiB") / p50("decode", "16 B");
const viewRatio = p50("decode", "16 MiB") / p50("decode", "1 KiB");
console.log(`\ndecode 16 MiB / 16 B (p50): ${ratio.toFixed(2)}; 16 MiB / 1 KiB, both views: ${viewRatio.toFixed(2)} (zero-copy: ≈ 1)`);

finish("frame", c, {
  params: { sizes: SIZES.map(([label]) => label), cpu_ms_per_case: cpuMs },
  raw: { rows, bun_revision: Bun.revision },
  ratios: { decode_16MiB_over_16B: ratio, decode_16MiB_over_1KiB: viewRatio },
  tables: [
    {
      title: `svc.v2 frame codec, ns per frame (mitata, ${cpuMs} ms of CPU per case; decode 16 MiB / 16 B p50 = ${ratio.toFixed(2)}, 16 MiB / 1 KiB = ${viewRatio.toFixed(2)}: views, zero-copy means ≈ 1; frames up to 1,000 B copy their payload)`,
      columns: ["op", ...SIZES.map(([label]) => `${label} p50 ns`), "16 MiB / 16 B"],
      rows: OPS.map((op) => [op, ...SIZES.map(([label]) => +p50(op, label).toFixed(1)), +(p50(op, "16 MiB") / p50(op, "16 B")).toFixed(2)]),
    },
  ],
  charts: [
    {
      id: "frame-decode",
      title: "svc.v2 frame: ns per frame by payload size (p50)",
      kind: "bar",
      x_label: "payload",
      y_label: "ns per frame (log)",
      log_y: true,
      series: OPS.map((op) => ({ name: op, points: SIZES.map(([label]) => [label, +p50(op, label).toFixed(1)] as [string, number]) })),
    },
  ],
});
