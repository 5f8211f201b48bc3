import { readFileSync } from "node:fs";

/**
 * Shared by every load generator (each runs as its own process): params in
 * as JSON (an argument, or `@file`), JSON lines out (`event` names them; the last is
 * `result`), the process's own CPU so the reader can see when the client, not
 * the server, was the limit.
 */
export function params<P>(): P & { index: number; of: number } {
  const arg = process.argv[2];
  if (!arg) throw new Error("usage: bun bench/load/<gen>.ts '<json params>' | @params.json");
  const raw = arg.startsWith("@") ? readFileSync(arg.slice(1), "utf8") : arg;
  return JSON.parse(raw) as P & { index: number; of: number };
}

// A generator whose orchestrator died stops too (its own deadline would end it later anyway).
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(2);
}, 1000).unref();

// The first line goes out at start: Bun makes a process's stdout on its first use, and a generator whose first
// line was the window's "measuring" stalled for 15–30 ms as the window opened, a stall the latencies of the
// window's first 100 ms carried (bench/FINDINGS.md, twenty-third section).
emit("started", {});

export function emit(event: string, body: object): void {
  process.stdout.write(JSON.stringify({ event, ...body }) + "\n");
}

/** CPU % of this process (100 = one core) since `start()`. */
export function selfCpu(): () => { client_cpu_pct: number; client_rss_kb: number } {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  return () => {
    const c = process.cpuUsage(c0);
    const wall = performance.now() - t0;
    return {
      client_cpu_pct: Math.round(((c.user + c.system) / 1000 / wall) * 1000) / 10,
      client_rss_kb: Math.round(process.memoryUsage.rss() / 1024),
    };
  };
}

export interface OpenOptions {
  headers?: Record<string, string>;
  protocols?: string[];
}

/**
 * Opens `n` Bun WebSocket clients, `batch` at a time. `attach` runs on the
 * socket before it opens (listeners first: an early push with no listener is
 * lost). Rejects when any socket fails or the deadline passes.
 */
export async function openAll(
  n: number,
  url: (i: number) => string,
  opts: (i: number) => OpenOptions,
  attach: (ws: WebSocket, i: number) => void,
  { batch = 200, timeoutMs = 20_000 } = {},
): Promise<WebSocket[]> {
  const out: WebSocket[] = new Array(n);
  const deadline = Date.now() + timeoutMs;
  for (let start = 0; start < n; start += batch) {
    const opening: Promise<void>[] = [];
    for (let i = start; i < Math.min(n, start + batch); i++) {
      // One options object: Bun drops headers passed as a third argument.
      const ws = new WebSocket(url(i), opts(i) as object);
      ws.binaryType = "nodebuffer"; // a Buffer is a Uint8Array view: no copy
      attach(ws, i);
      out[i] = ws;
      opening.push(
        new Promise((resolve, reject) => {
          ws.addEventListener("open", () => resolve(), { once: true });
          ws.addEventListener("error", () => reject(new Error(`socket ${i} failed to open (${url(i)})`)), { once: true });
        }),
      );
    }
    const left = deadline - Date.now();
    await Promise.race([
      Promise.all(opening),
      Bun.sleep(Math.max(0, left)).then(() => Promise.reject(new Error(`opening ${n} sockets took over ${timeoutMs} ms`))),
    ]);
  }
  return out;
}

/**
 * The bounded measuring clock of a run: `start()` (once every socket is open)
 * begins the warm-up, then a measured window that ends at `durationMs` or when
 * `maxMessages` have completed, whichever first.
 */
export class Window {
  measuring = false;
  stopped = false;
  endedAt = 0;
  private startedAt = 0;
  private stopCpu?: () => { client_cpu_pct: number; client_rss_kb: number };
  cpu = { client_cpu_pct: 0, client_rss_kb: 0 };
  onStop?: () => void;
  /**
   * Runs as the window opens, before `measuring` turns true: a generator records through its warm-up and drops it
   * here, so that its hot paths run the same code before and after the window opens (a branch first taken then
   * threw its compiled code away mid-run; bench/FINDINGS.md, twenty-third section).
   */
  onOpen?: () => void;

  constructor(
    private readonly warmupMs: number,
    private readonly durationMs: number,
  ) {}

  start(): void {
    setTimeout(() => this.begin(), this.warmupMs);
  }

  private begin(): void {
    if (this.stopped) return;
    this.onOpen?.();
    this.measuring = true;
    this.startedAt = performance.now();
    emit("measuring", {}); // a parent that starts other load with this window waits for it (bench/limit.ts)
    this.stopCpu = selfCpu();
    // Counted from the real start: a generator busy past its warm-up (10,000 deliveries per message) still measures a full window.
    setTimeout(() => this.stop(), this.durationMs);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.measuring = false;
    this.endedAt = performance.now();
    if (this.stopCpu) this.cpu = this.stopCpu();
    this.onStop?.();
  }

  /** Measured seconds (0 when the run ended inside its warm-up). */
  get seconds(): number {
    return this.startedAt ? (this.endedAt - this.startedAt) / 1000 : 0;
  }
}

/** Resolves once the window has stopped. */
export const stopped = (w: Window): Promise<void> => new Promise((r) => (w.stopped ? r() : (w.onStop = r)));
