import { Histogram, type HistSnapshot } from "./hist.ts";
import type { Round } from "./measure.ts";
import { median, round } from "./stats.ts";

/**
 * One thing measured in rounds: a started server plus how to load it once.
 * The baseline comes first; Ibis and peers follow, all already started, so
 * every round sees the same processes (only the machine's mood changes).
 */
export interface Subject<R> {
  readonly name: string;
  readonly kind: "baseline" | "peer" | "ibis";
  run(round: number): Promise<R>;
}

/**
 * Runs subjects in alternation (baseline, Ibis, baseline, Ibis, …) for `rounds`
 * rounds. A slow episode of a shared box then hits both sides of a round,
 * instead of making one side look slow. `swap`: the subjects after the
 * baselines run in reverse order every other round (A B, B A, …): two nodes
 * compared pair by pair would otherwise always run in one order, and the
 * second inherits what the first left behind (dirty pages, a warm cache).
 */
export async function alternate<R>(
  subjects: readonly Subject<R>[],
  rounds: number,
  notes: string[] = [],
  swap = false,
): Promise<Record<string, R[]>> {
  const out: Record<string, R[]> = Object.fromEntries(subjects.map((s) => [s.name, []]));
  const live = new Set(subjects.map((s) => s.name));
  const baselines = subjects.filter((s) => s.kind === "baseline");
  const others = subjects.filter((s) => s.kind !== "baseline");
  for (let r = 0; r < rounds; r++) {
    for (const s of swap && r % 2 ? [...baselines, ...others.toReversed()] : subjects) {
      if (!live.has(s.name)) continue;
      try {
        const res = await s.run(r);
        out[s.name]!.push(res);
        console.error(`  round ${r + 1}/${rounds} ${s.name}: ${brief(res)}`);
      } catch (e) {
        // A failing baseline is a broken bench; a failing Ibis side is a finding: note it, keep going.
        if (s.kind === "baseline") throw e;
        const msg = `${s.name} failed in round ${r + 1}: ${(e as Error).message.split("\n").slice(0, 3).join(" / ")}`;
        console.error(`NOTE: ${msg}`);
        notes.push(msg);
        live.delete(s.name);
        delete out[s.name];
      }
    }
  }
  return out;
}

function brief(r: unknown): string {
  if (r && typeof r === "object" && "rate" in r) return `${round(Number((r as { rate: number }).rate))}/s`;
  return JSON.stringify(r).slice(0, 120);
}

export interface Ratio {
  /** Median over rounds of the subject's metric. */
  median: number;
  /** median(subject) / median(baseline). */
  ratio_of_medians: number;
  /** Median over rounds of subject/baseline within the same round (robust to drift). */
  ratio: number;
  per_round: number[];
}

/** Ratios of every subject to `baseline` for one metric (higher or lower is better as the caller reads it). */
export function ratios<R>(byName: Record<string, R[]>, baseline: string, metric: (r: R) => number): Record<string, Ratio> {
  const base = byName[baseline]!.map(metric);
  const out: Record<string, Ratio> = {};
  for (const [name, rs] of Object.entries(byName)) {
    const vals = rs.map(metric);
    const per = vals.map((v, i) => (base[i] ? round(v / base[i]!, 3) : 0));
    out[name] = {
      median: round(median(vals), 1),
      ratio_of_medians: median(base) ? round(median(vals) / median(base), 3) : 0,
      ratio: round(median(per), 3),
      per_round: per,
    };
  }
  return out;
}

/** The round whose metric is the median one (the round reported in tables). */
export function medianRound<R>(rs: readonly R[], metric: (r: R) => number): R {
  const sorted = [...rs].sort((a, b) => metric(a) - metric(b));
  return sorted[(sorted.length - 1) >> 1]!;
}

/**
 * The small stream beside the large messages, over every round: its p99 from all rounds' messages together (a
 * round has ~200 of them, so one round's p99 is its second-worst message, and the round of median MB/s need not
 * be a median round for the small stream), each round's own p99, and the median round's SERVER_ACK p99.
 */
export function smallStreamOf(rounds: readonly Round[]): { p99: number; perRound: string; ackP99: number | "" } | undefined {
  const results = rounds.map((r) => r.clients[0]).filter((x) => x?.small_p99_ms !== undefined);
  if (!results.length) return undefined;
  const hists = results.flatMap((x) => (x!.small_hist ? [x!.small_hist as HistSnapshot] : []));
  const acks = results.flatMap((x) => (x!.small_ack_p99_ms === undefined ? [] : [Number(x!.small_ack_p99_ms)]));
  return {
    p99: hists.length ? round(Histogram.from(hists).summary().p99_us / 1000, 2) : Number(results[0]!.small_p99_ms),
    perRound: results.map((x) => Number(x!.small_p99_ms)).join(" / "),
    ackP99: acks.length ? median(acks) : "",
  };
}

/**
 * Two compared sides' rounds side by side, round by round (the rounds `alternate` ran them in): for each measure
 * a's and b's value, and after the first measure their ratio b / a; then a row of medians. `measures[0]` is the
 * one the comparison is about (a rate); the others are read beside it.
 */
export function pairedTable<R>(
  a: readonly R[],
  b: readonly R[],
  [la, lb]: readonly [string, string],
  measures: readonly (readonly [name: string, of: (r: R) => number])[],
  title: string,
): { title: string; columns: string[]; rows: (string | number)[][] } {
  const [first, ...rest] = measures;
  if (!first) throw new Error("pairedTable: no measure");
  const rows: (string | number)[][] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const [x, y] = [first[1](a[i]!), first[1](b[i]!)];
    rows.push([i + 1, x, y, round(y / Math.max(Number.MIN_VALUE, x), 3), ...rest.flatMap(([, of]) => [of(a[i]!), of(b[i]!)])]);
  }
  if (rows.length) rows.push(["median", ...rows[0]!.slice(1).map((_, j) => round(median(rows.map((r) => r[j + 1] as number)), 3))]);
  return {
    title,
    columns: ["round", `${la} ${first[0]}`, `${lb} ${first[0]}`, `${lb} / ${la}`, ...rest.flatMap(([name]) => [`${la} ${name}`, `${lb} ${name}`])],
    rows,
  };
}
