import type { Server } from "bun";

/**
 * Shared by the raw Bun baselines: loopback only, port 0, `READY <port>` on
 * stdout once listening (bench/lib/proc.ts waits for it), and GET /gc which
 * runs a full GC and answers the process RSS (for per-connection memory).
 */
export const MAX_PAYLOAD = 16 * 1024 * 1024 + 64 * 1024; // same headroom as Ibis's IBIS_WS_MAX_PAYLOAD default

export function announce(server: Server<unknown>): void {
  console.log(`READY ${server.port}`);
  // Stops by itself when the scenario that started it is gone (even after a SIGKILL).
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 1000).unref();
  process.on("SIGTERM", () => {
    server.stop(true);
    process.exit(0);
  });
}

export function gcRoute(req: Request): Response | undefined {
  if (new URL(req.url).pathname !== "/gc") return undefined;
  Bun.gc(true);
  return Response.json({ rss_kb: Math.round(process.memoryUsage.rss() / 1024) });
}
