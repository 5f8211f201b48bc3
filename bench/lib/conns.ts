/**
 * Runs the raw-TCP connection generator (bench/load/connect.ts) split over
 * as many processes as the open-file limit needs, each on its own source
 * network (127.<77+i>.x.y), and exposes its phases to a scenario.
 */
import { openFilesLimit } from "./machine.ts";
import { startClient, type Client } from "./proc.ts";
import { sum } from "./stats.ts";

/** Connections one generator process may hold (its open-file limit, less headroom). */
export function perProcess(): number {
  const lim = openFilesLimit() ?? 1024;
  return Math.max(100, Math.min(lim - 500, 15_000));
}

export interface ConnPlan {
  host: string;
  port: number;
  path: string;
  count: number;
  concurrency: number;
  pending: number;
  holdMs: number;
  /** Per-connection handshake headers, cycled; sliced per process. */
  headers?: Record<string, string>[];
}

export interface OpenEvent {
  opened: number;
  failed: number;
  ms: number;
}

export class ConnFleet {
  readonly clients: Client<Record<string, unknown>>[] = [];

  constructor(plan: ConnPlan) {
    const per = perProcess();
    const procs = Math.ceil(plan.count / per);
    for (let i = 0; i < procs; i++) {
      const count = Math.min(per, plan.count - i * per);
      const headers = plan.headers?.slice(i * per, i * per + count);
      this.clients.push(
        startClient(
          "bench/load/connect.ts",
          { ...plan, count, headers, net: 77 + i, index: i, of: procs, concurrency: Math.ceil(plan.concurrency / procs) },
          { timeoutMs: plan.holdMs * 3 + 120_000 },
        ),
      );
    }
  }

  /** Waits for every process's event (`open` or `reconnected`) and sums them (ms: the slowest). */
  async phase(name: "open" | "reconnected"): Promise<OpenEvent> {
    const evs = (await Promise.all(this.clients.map((c) => c.event(name)))) as unknown as OpenEvent[];
    return { opened: sum(evs.map((e) => e.opened)), failed: sum(evs.map((e) => e.failed ?? 0)), ms: Math.max(...evs.map((e) => e.ms)) };
  }

  reconnect(): void {
    for (const c of this.clients) c.signal("SIGUSR1");
  }

  async close(): Promise<Record<string, unknown>[]> {
    for (const c of this.clients) c.signal("SIGUSR2");
    return Promise.all(this.clients.map((c) => c.result));
  }
}
