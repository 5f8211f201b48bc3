import { ConfigError, loadConfig } from "./config/index.ts";
import { startIbis } from "./node.ts";

// Entry point of `bun run start` and of the compiled binary.
try {
  const config = loadConfig();
  const node = await startIbis(config);
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    node.services.log.info("shutting down", { signal });
    await node.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
} catch (e) {
  if (e instanceof ConfigError) {
    console.error(e.message);
    process.exit(78); // EX_CONFIG
  }
  throw e;
}
