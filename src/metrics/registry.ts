/**
 * A small Prometheus registry, Bun-native: a counter is a number field and a
 * labelled family hands out its children once, at set-up, so the hot path does
 * `counter.inc()` — no label hashing, no Map lookup per message (prom-client's
 * `inc()` resolves labels on every call; docs/operations.md has the figures).
 * Text exposition format 0.0.4.
 */
export interface Metric {
  readonly name: string;
  render(out: string[]): void;
}

const labelText = (labels: Readonly<Record<string, string>>) => {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
};

const header = (out: string[], name: string, help: string, type: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);

export class Counter {
  value = 0;
  constructor(readonly labels: Readonly<Record<string, string>> = {}) {}
  inc(by = 1): void {
    this.value += by;
  }
}

/** A counter family; `child(labels)` is called once at set-up and kept. */
export class CounterFamily implements Metric {
  readonly #children: Counter[] = [];
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  child(labels: Readonly<Record<string, string>> = {}): Counter {
    const c = new Counter(labels);
    this.#children.push(c);
    return c;
  }
  render(out: string[]): void {
    header(out, this.name, this.help, "counter");
    for (const c of this.#children) out.push(`${this.name}${labelText(c.labels)} ${c.value}`);
  }
}

/** Values read at scrape time (a gauge, or a counter kept elsewhere such as CPU time). */
export class Gauge implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => Iterable<[Readonly<Record<string, string>>, number]>,
    private readonly type: "gauge" | "counter" = "gauge",
  ) {}
  render(out: string[]): void {
    header(out, this.name, this.help, this.type);
    for (const [labels, v] of this.read()) out.push(`${this.name}${labelText(labels)} ${v}`);
  }
}

/** Cumulative buckets (upper bounds, ascending); observed per batch or per sample, not per message. */
export class Histogram implements Metric {
  readonly #counts: Float64Array;
  #sum = 0;
  #count = 0;
  constructor(
    readonly name: string,
    readonly help: string,
    readonly bounds: readonly number[],
  ) {
    this.#counts = new Float64Array(bounds.length);
  }
  observe(v: number): void {
    this.#sum += v;
    this.#count++;
    const b = this.bounds;
    for (let i = 0; i < b.length; i++) {
      if (v <= b[i]!) {
        this.#counts[i]!++;
        return;
      }
    }
  }
  get count(): number {
    return this.#count;
  }
  render(out: string[]): void {
    header(out, this.name, this.help, "histogram");
    let acc = 0;
    this.bounds.forEach((le, i) => {
      acc += this.#counts[i]!;
      out.push(`${this.name}_bucket{le="${le}"} ${acc}`);
    });
    out.push(`${this.name}_bucket{le="+Inf"} ${this.#count}`, `${this.name}_sum ${this.#sum}`, `${this.name}_count ${this.#count}`);
  }
}

export class Registry {
  readonly #metrics: Metric[] = [];
  add<M extends Metric>(m: M): M {
    this.#metrics.push(m);
    return m;
  }
  render(): string {
    const out: string[] = [];
    for (const m of this.#metrics) m.render(out);
    return out.join("\n") + "\n";
  }
}
