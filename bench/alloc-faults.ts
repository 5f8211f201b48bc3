/**
 * alloc-faults: what a fresh large allocation costs the event loop. The
 * uplink of a 16 MiB JSON message made two fresh 16 MiB strings (the frame's
 * text and, from JSON.parse, the payload's): this repeats the steps a node
 * takes (Bun's copy of the frame, the UTF-8 decode, the parse) beside the
 * parse a text frame gets (`parseJsonSharing`: the payload string a slice of
 * the text, no fresh 16 MiB) and the read a binary frame gets now
 * (`parseJsonBytesSharing`: no text at all, the payload checked in place and
 * validated as the uplink validates it) and prints, per step, wall ms, minor page faults
 * and system-CPU ms, split into the iterations that got fresh pages and those
 * that reused freed ones (bench/FINDINGS.md, issue 19: the decode block is
 * mostly page faults).
 *
 *   bun bench/alloc-faults.ts [--mib 16] [--n 24]
 */
import { validateUplink } from "../src/delivery/validate.ts";
import { decodeUplinkBytes, parseJsonSharing } from "../src/protocol/json-sharing.ts";
import { num, parseArgs } from "./lib/args.ts";
import { median } from "./lib/stats.ts";

const args = parseArgs();
const mib = num(args, "mib", 16);
const n = num(args, "n", 24);
const frame = new TextEncoder().encode(
  JSON.stringify({ id: "C2C.1.2.r", type: "C2C", from: 4, to: 5, msg_type: "text", payload: { text: "x".repeat(mib * 1024 * 1024 - 200) } }),
);
const decoder = new TextDecoder("utf-8", { fatal: true });

interface Sample {
  ms: number;
  faults: number;
  sysMs: number;
}
const steps: Record<string, Sample[]> = { copy: [], decode: [], parse: [], "parse, sharing": [], "bytes, in place + validate": [] };

function step(name: string, f: () => unknown): unknown {
  const r0 = process.resourceUsage();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const v = f();
  const ms = performance.now() - t0;
  steps[name]!.push({ ms, faults: process.resourceUsage().minorPageFault - r0.minorPageFault, sysMs: process.cpuUsage(c0).system / 1000 });
  return v;
}

let held: unknown[] = [];
for (let i = 0; i < n; i++) {
  const copy = step("copy", () => frame.slice()) as Uint8Array;
  const text = step("decode", () => decoder.decode(copy)) as string;
  held = [step("parse", () => JSON.parse(text)), ...held].slice(0, 2); // a message or two alive, as on a node
  // What the uplink does now: the payload string is a slice of the frame's text, not a fresh copy.
  held = [step("parse, sharing", () => parseJsonSharing(text)), ...held].slice(0, 2);
  // What a binary frame's uplink does now: no text; the payload's string stays in the frame's bytes.
  held = [step("bytes, in place + validate", () => validateUplink(decodeUplinkBytes(copy)!, 4n, 1)), ...held].slice(0, 2);
  await Bun.sleep(20); // the next message comes later (the allocator may give the memory back meanwhile)
}

const pageKiB = 4;
const fresh = (s: Sample) => s.faults * pageKiB >= (mib * 1024) / 2;
const row = (list: Sample[]) =>
  list.length ? `${list.length}\t${median(list.map((s) => s.ms)).toFixed(1)}\t${median(list.map((s) => s.faults))}\t${median(list.map((s) => s.sysMs)).toFixed(1)}` : "0\t-\t-\t-";
console.log(`${mib} MiB, ${n} iterations (medians)\nstep\tpages\tcount\twall ms\tminor faults\tsystem ms`);
for (const [name, list] of Object.entries(steps)) {
  console.log(`${name}\tfresh\t${row(list.filter(fresh))}`);
  console.log(`${name}\treused\t${row(list.filter((s) => !fresh(s)))}`);
}
void held;
