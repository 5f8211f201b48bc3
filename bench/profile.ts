/**
 * Summarises a `bun --cpu-prof` profile (Chrome .cpuprofile) by counting
 * samples, never by summing time deltas: the node idles while the baseline's
 * rounds run and each idle gap lands on the next sample (bench/README.md).
 * Prints the top functions by self samples and by inclusive samples, with
 * idle/GC/program buckets apart.
 *
 *   bun bench/profile.ts <file.cpuprofile> [--top 30] [--filter src/]
 */
import { readFileSync } from "node:fs";
import { num, parseArgs, str } from "./lib/args.ts";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
}

const args = parseArgs();
const file = process.argv.slice(2).find((a) => !a.startsWith("--") && a.endsWith(".cpuprofile"));
if (!file) throw new Error("usage: bun bench/profile.ts <file.cpuprofile> [--top N] [--filter text]");
const top = num(args, "top", 30);
const filter = str(args, "filter", "");
const prof = JSON.parse(readFileSync(file, "utf8")) as Profile;

const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const label = (n: Node) => {
  const { functionName, url, lineNumber } = n.callFrame;
  const where = url ? `${url.replace(/^.*\/(src|bench|node_modules)\//, "$1/")}:${lineNumber + 1}` : "";
  return `${functionName || "(anonymous)"} ${where}`.trim();
};

const self = new Map<string, number>();
const incl = new Map<string, number>();
let total = 0;
for (const s of prof.samples) {
  const n = byId.get(s);
  if (!n) continue;
  total++;
  const l = label(n);
  self.set(l, (self.get(l) ?? 0) + 1);
  const seen = new Set<string>();
  for (let id: number | undefined = s; id !== undefined; id = parent.get(id)) {
    const k = label(byId.get(id)!);
    if (seen.has(k)) continue;
    seen.add(k);
    incl.set(k, (incl.get(k) ?? 0) + 1);
  }
}

const idle = (self.get("(idle)") ?? 0) + (self.get("(program)") ?? 0);
const busy = total - idle;
const pct = (v: number) => `${((100 * v) / Math.max(1, busy)).toFixed(1)}%`.padStart(6);
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (of ${busy} busy samples; ${total} total, ${idle} idle/program)`);
  const rows = [...m].filter(([k]) => k !== "(idle)" && k !== "(program)" && k !== "(root)" && (!filter || k.includes(filter)));
  for (const [k, v] of rows.sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(v)}  ${String(v).padStart(6)}  ${k}`);
};
show("self", self);
show("inclusive", incl);

// --callers NAME: who calls the functions whose label starts with NAME (self samples, by caller).
const callersOf = str(args, "callers", "");
if (callersOf) {
  const by = new Map<string, number>();
  for (const s of prof.samples) {
    const n = byId.get(s);
    if (!n || !label(n).startsWith(callersOf)) continue;
    const chain: string[] = [];
    for (let id = parent.get(s); id !== undefined && chain.length < 3; id = parent.get(id)) chain.push(label(byId.get(id)!));
    const k = chain.join(" < ");
    by.set(k, (by.get(k) ?? 0) + 1);
  }
  console.log(`\ncallers of ${callersOf}`);
  for (const [k, v] of [...by].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${String(v).padStart(6)}  ${k}`);
}
