import { ConfigError, fields, loadConfig } from "./config/index.ts";
import { superviseWorkers, WORKER_INDEX_ENV, workerRefusals, workersArg } from "./cluster/workers.ts";
import { createLogger } from "./log.ts";
import { startIbis } from "./node.ts";

// What the entry point (src/main.ts) runs once the allocator is set up.
try {
  const env: Record<string, string | undefined> = { ...process.env };
  const arg = workersArg(process.argv.slice(2));
  if (arg !== undefined) env[fields.workers.env] = arg;
  const config = loadConfig(env);
  const refusals = workerRefusals(config);
  if (refusals.length) throw new ConfigError(`refusing to start ${config.workers} workers:\n  ${refusals.join("\n  ")}`);

  // bench/ connections reads RSS per connection after a full GC (docs/bench.md); opt-in, never in production.
  // Installed in the supervisor too: the bench signals every process of the tree, and SIGUSR1 unhandled kills.
  if (config.benchGcSignal && config.env !== "production") process.on("SIGUSR1", () => Bun.gc(true));

  const workerIndex = process.env[WORKER_INDEX_ENV];
  if (config.workers > 1 && workerIndex === undefined) {
    const log = createLogger(config.logLevel, { role: "supervisor" });
    // Workers give up on their own at grace + timeout (and say why); the supervisor's SIGKILL is the backstop after that.
    process.exit(await superviseWorkers(config.workers, log, config.shutdownGraceMs + config.shutdownTimeoutMs + 5_000));
  }
  // A fixed IBIS_NODE_ID is the first worker's; worker i takes id + i.
  const shifted = workerIndex !== undefined && config.nodeId !== undefined;
  const node = await startIbis(shifted ? { ...config, nodeId: config.nodeId! + Number(workerIndex) } : config);
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const log = node.services.log;
    log.info("shutting down", { signal });
    // A stop that hangs (a database or Redis that stopped answering) must not keep the process, its
    // timers and its logs alive forever: what was acknowledged is stored already; the rest is resent.
    const deadline = config.shutdownGraceMs + config.shutdownTimeoutMs;
    setTimeout(() => {
      log.error("shutdown did not finish in time; exiting", { signal, after_ms: deadline, step: node.stopStep });
      process.exit(1);
    }, deadline);
    await node.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  if (workerIndex !== undefined) {
    // A worker whose supervisor vanished (SIGKILL) stops too instead of lingering on the port.
    const parent = process.ppid;
    setInterval(() => process.ppid !== parent && void shutdown("supervisor gone"), 1000).unref();
  }
} catch (e) {
  if (e instanceof ConfigError) {
    console.error(e.message);
    process.exit(78); // EX_CONFIG
  }
  throw e;
}
