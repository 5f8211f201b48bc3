/**
 * HDR-style log-linear histogram of non-negative integer microseconds:
 * exact below 128 µs, then 64 sub-buckets per power of two (< 1.6 % error),
 * up to 2^31 µs. Sparse-serialisable and mergeable across processes.
 */
const SUB = 64;
const LINEAR = 2 * SUB; // values below this are stored exactly
const BUCKETS = LINEAR + 25 * SUB;

function indexOf(us: number): number {
  const v = us < 0 ? 0 : us >= 2 ** 31 ? 2 ** 31 - 1 : Math.round(us);
  if (v < LINEAR) return v;
  const msb = 31 - Math.clz32(v); // >= 7
  const shift = msb - 6;
  return LINEAR + (shift - 1) * SUB + ((v >>> shift) - SUB);
}

/** Midpoint of the bucket (the value reported for it). */
function valueOf(index: number): number {
  if (index < LINEAR) return index;
  const shift = Math.floor((index - LINEAR) / SUB) + 1;
  const top = ((index - LINEAR) % SUB) + SUB;
  return (top << shift) + (1 << (shift - 1));
}

export interface HistSnapshot {
  /** [bucket index, count] pairs. */
  readonly b: [number, number][];
  readonly n: number;
  readonly min: number;
  readonly max: number;
  readonly sum: number;
}

export interface Percentiles {
  count: number;
  min_us: number;
  mean_us: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  p999_us: number;
  max_us: number;
}

export class Histogram {
  private readonly counts = new Float64Array(BUCKETS);
  n = 0;
  min = Infinity;
  max = 0;
  sum = 0;

  record(us: number): void {
    this.counts[indexOf(us)]!++;
    this.n++;
    this.sum += us;
    if (us < this.min) this.min = us;
    if (us > this.max) this.max = us;
  }

  /** Empties it: a generator records through its warm-up and starts again as its window opens (bench/load/common.ts). */
  reset(): void {
    this.counts.fill(0);
    this.n = 0;
    this.min = Infinity;
    this.max = 0;
    this.sum = 0;
  }

  merge(s: HistSnapshot): this {
    for (const [i, c] of s.b) this.counts[i]! += c;
    this.n += s.n;
    this.sum += s.sum;
    if (s.n > 0) {
      this.min = Math.min(this.min, s.min);
      this.max = Math.max(this.max, s.max);
    }
    return this;
  }

  percentile(p: number): number {
    if (this.n === 0) return 0;
    const want = Math.max(1, Math.ceil((p / 100) * this.n));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= want) return Math.min(valueOf(i), this.max);
    }
    return this.max;
  }

  summary(): Percentiles {
    const r = (x: number) => Math.round(x * 10) / 10;
    return {
      count: this.n,
      min_us: this.n ? r(this.min) : 0,
      mean_us: this.n ? r(this.sum / this.n) : 0,
      p50_us: this.percentile(50),
      p90_us: this.percentile(90),
      p99_us: this.percentile(99),
      p999_us: this.percentile(99.9),
      max_us: r(this.max),
    };
  }

  snapshot(): HistSnapshot {
    const b: [number, number][] = [];
    for (let i = 0; i < BUCKETS; i++) if (this.counts[i]) b.push([i, this.counts[i]!]);
    return { b, n: this.n, min: this.n ? this.min : 0, max: this.max, sum: this.sum };
  }

  static from(snaps: readonly HistSnapshot[]): Histogram {
    const h = new Histogram();
    for (const s of snaps) h.merge(s);
    return h;
  }
}
