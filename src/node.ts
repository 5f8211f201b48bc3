import type { Server } from "bun";
import { hostname } from "node:os";
import { loadConfig, type Config } from "./config/index.ts";
import { leaseNodeId, LEASE_TTL_MS, type NodeLease } from "./cluster/node-lease.ts";
import { openStore, type Store } from "./db/store.ts";
import { createDelivery, type DeliveryDeps } from "./delivery/index.ts";
import { TokenService } from "./domain/auth/tokens.ts";
import { createHttpApp } from "./http/app.ts";
import { IdGenerator } from "./ids/tsid.ts";
import { createLogger, type Logger } from "./log.ts";
import { resolveSecrets } from "./secrets.ts";
import type { Services } from "./services.ts";
import { createWsTransport } from "./ws/index.ts";

export interface StartOptions {
  /** An already open store (tests pass a template-loaded PGlite or a fresh test database). */
  readonly store?: Store;
  /** Close `store` on stop even when it was passed in. */
  readonly ownStore?: boolean;
  readonly now?: () => number;
  readonly log?: Logger;
  /**
   * The ports delivery consumes (session registry, social graph). Given: the
   * delivery engine runs and /api/v1/msg is mounted. The lead wires the real ones.
   */
  readonly delivery?: DeliveryDeps;
}

export interface IbisNode {
  readonly services: Services;
  readonly server: Server<unknown>;
  readonly port: number;
  /** http://host:port of this node (loopback when listening on all interfaces). */
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts one Ibis node: store, secrets, ids, REST and /ws on one Bun.serve. */
export async function startIbis(config: Config = loadConfig(), opts: StartOptions = {}): Promise<IbisNode> {
  const log = opts.log ?? createLogger(config.logLevel);
  const now = opts.now ?? Date.now;
  const store =
    opts.store ??
    (await openStore({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: config.dbPoolSize }));
  const closeStore = !opts.store || opts.ownStore === true;

  let lease: NodeLease | undefined;
  let nodeId = config.nodeId;
  if (nodeId === undefined) {
    lease = await leaseNodeId(store, `${hostname()}:${process.pid}:${crypto.randomUUID()}`, now);
    nodeId = lease.nodeId;
  }
  const renew = lease ? setInterval(() => void lease!.renew().catch(() => {}), LEASE_TTL_MS / 3) : undefined;
  renew?.unref();

  const secrets = await resolveSecrets(config, store);
  const base: Services = {
    config,
    log,
    store,
    ids: new IdGenerator(nodeId, now),
    nodeId,
    secrets,
    tokens: new TokenService(
      {
        secret: secrets.tokenSecret,
        accessTtlSec: config.accessTokenTtl,
        refreshTtlSec: config.refreshTokenTtl,
        clockSkewSec: config.tokenClockSkew,
      },
      now,
    ),
    now,
  };
  const delivery = opts.delivery ? createDelivery(base, opts.delivery) : undefined;
  const services: Services = delivery ? { ...base, delivery } : base;

  const http = createHttpApp(services);
  const ws = createWsTransport(services);
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    maxRequestBodySize: config.wsMaxPayload,
    async fetch(req, srv) {
      const url = new URL(req.url);
      if (url.pathname === "/ws") return ws.upgrade(req, srv);
      return http.fetch(req);
    },
    websocket: { ...ws.websocket, maxPayloadLength: config.wsMaxPayload },
  });
  const port = server.port!;
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  log.info("ibis listening", { port, node_id: nodeId, store: store.kind });

  let stopped = false;
  return {
    services,
    server,
    port,
    url: `http://${host}:${port}`,
    async stop() {
      if (stopped) return;
      stopped = true;
      ws.closeAll(1001, "server shutting down");
      await server.stop(true);
      await delivery?.stop();
      if (renew) clearInterval(renew);
      await lease?.release().catch(() => {});
      if (closeStore) await store.close();
    },
  };
}
