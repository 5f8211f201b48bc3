import type { Server } from "bun";
import type { Hono } from "hono";
import { ConfigError, fields, loadConfig, type Config } from "./config/index.ts";
import { openCluster, type Cluster } from "./cluster/index.ts";
import { CLOSE_RECONNECT, CLOSE_RECONNECT_REASON } from "./cluster/lifecycle.ts";
import { openStore, type Store } from "./db/store.ts";
import { Admins } from "./domain/admin/admins.ts";
import { Accounts } from "./domain/auth/accounts.ts";
import { Attachments } from "./domain/attachments/attachments.ts";
import { loadLoginRsa, type LoginRsa } from "./domain/auth/login-rsa.ts";
import { AccountLogout } from "./domain/auth/logout.ts";
import type { SessionControl } from "./domain/auth/revocation.ts";
import { TokenService } from "./domain/auth/tokens.ts";
import type { SessionsEntry } from "./bus/bus.ts";
import { stringifyJson } from "./protocol/json.ts";
import { cutEntry } from "./ws/cut.ts";
import { createDelivery, type Delivery } from "./delivery/index.ts";
import { createChannels, type Channels, type LocalPush, type PaymentProvider } from "./domain/channels/index.ts";
import type { Notifier, SessionRegistry, SocialGraph } from "./delivery/ports.ts";
import { createE2ee } from "./domain/e2ee/index.ts";
import { assistantsFromConfig, createSocial, seedAssistants, type Social } from "./domain/social/index.ts";
import { createHttpApp } from "./http/app.ts";
import { chatPageRoutes } from "./http/chat-page.ts";
import { preBusinessError } from "./http/envelope.ts";
import { localWsUrl } from "./domain/init/init-data.ts";
import { IdGenerator } from "./ids/tsid.ts";
import { createLogger, type Logger } from "./log.ts";
import { resolveSecrets } from "./secrets.ts";
import type { Services } from "./services.ts";
import { createWsTransport, type Conn, type EngineSource, type WsTransport } from "./ws/index.ts";
import { metrics, monitorEventLoop } from "./metrics/index.ts";

const LOGOUT_SWEEP_MS = 10 * 60_000;

export interface StartOptions {
  /** An already open store (tests pass a template-loaded PGlite or a fresh test database). */
  readonly store?: Store;
  /** Close `store` on stop even when it was passed in. */
  readonly ownStore?: boolean;
  readonly now?: () => number;
  readonly log?: Logger;
  /** S2C emitter; default: the delivery engine's notifier (stored, pushed, pulled offline). Tests pass a recorder. */
  readonly notifier?: Notifier;
  /**
   * Delivery's ports: the session registry it pushes through (default: none
   * yet — at the transport merge, the transport's `ports.registry`) and the
   * social graph (default: this node's).
   */
  readonly delivery?: { readonly sessions?: SessionRegistry; readonly social?: SocialGraph };
  /** The engine behind /ws (or a factory receiving the transport's ports). Default: the delivery engine. */
  readonly engine?: EngineSource;
  /** The channel payment provider (default: the configured one, docs/channels.md). */
  readonly payments?: PaymentProvider;
}

export interface IbisNode {
  readonly services: Services;
  readonly server: Server<Conn>;
  /** The WebSocket transport (session registry, tell, sweep). */
  readonly ws: WsTransport;
  readonly port: number;
  /** http(s)://host:port of this node (loopback when listening on all interfaces). */
  readonly url: string;
  /** The social graph and services (delivery asks `social.graph`). */
  readonly social: Social;
  /** Channels (docs/channels.md); `channels.fanout.idle()` waits for queued pushes. */
  readonly channels: Channels;
  /** The REST application (its route table feeds /openapi.json). */
  readonly http: Hono;
  /** Runs the account-logout sweep now (it also runs at start and every 10 minutes): due accounts deleted, their sockets cut. */
  sweepLogouts(): Promise<void>;
  stop(): Promise<void>;
  /** The shutdown step under way (undefined before stop and after it finished): names what hung when a stop overruns. */
  readonly stopStep: string | undefined;
}

/** Starts one Ibis node: store, secrets, ids, REST and /ws on one Bun.serve. */
export async function startIbis(config: Config = loadConfig(), opts: StartOptions = {}): Promise<IbisNode> {
  const log = opts.log ?? createLogger(config.logLevel);
  const now = opts.now ?? Date.now;
  const store =
    opts.store ??
    (await openStore({ url: config.databaseUrl, dataDir: config.dataDir, poolSize: config.dbPoolSize }));
  const closeStore = !opts.store || opts.ownStore === true;

  let cluster: Cluster;
  try {
    cluster = await openCluster(config, store, log, now);
  } catch (e) {
    if (closeStore) await store.close();
    throw e;
  }
  const nodeId = cluster.nodeId;
  const undo = async () => {
    await cluster.close();
    if (closeStore) await store.close();
  };

  const secrets = await resolveSecrets(config, store).catch(async (e: unknown) => {
    await undo();
    throw e;
  });
  const ids = new IdGenerator(nodeId, now);
  if (config.adminPassword && (await new Admins(store.db, ids, now, config.passwordMemoryKib).ensure(config.adminAccount, config.adminPassword))) {
    log.info("first admin created", { account: config.adminAccount });
  }
  const tokens = new TokenService(
    {
      secret: secrets.tokenSecret,
      accessTtlSec: config.accessTokenTtl,
      refreshTtlSec: config.refreshTokenTtl,
      clockSkewSec: config.tokenClockSkew,
    },
    now,
  );
  const accounts = new Accounts(store, tokens, ids, now, config.passwordMemoryKib);
  // Every node, this one included (its own entries never touch Redis): invalidations first, in the same stream order.
  const everywhere = (entry: SessionsEntry) => {
    cluster.bus.send(nodeId, entry);
    cluster.broadcast(entry);
  };
  const sessions: SessionControl = {
    cut(c) {
      accounts.liveness.forget(c.userId);
      cluster.broadcast({ kind: "invalidate", change: { kind: "user", userId: c.userId } });
      everywhere(cutEntry(c));
    },
    tellDeviceType(deviceType, action, payload) {
      everywhere({ kind: "sessions", deviceType, action, payload: stringifyJson(payload) });
    },
    async onlineDevices(userId) {
      const out = new Set((ws?.registry.sessionsOf(userId) ?? []).map((s) => s.deviceId));
      if (cluster.presence.alone) return out;
      const found = await cluster.presence.lookup([userId]).catch(() => undefined);
      for (const e of found?.get(userId) ?? []) out.add(e.deviceId);
      return out;
    },
  };
  const base: Services = {
    config,
    log,
    store,
    ids,
    nodeId,
    secrets,
    tokens,
    accounts,
    sessions,
    loginRsa: config.loginRsa ? await loginRsaOrRefuse(config, store) : undefined,
    now,
    bus: cluster.bus,
    presence: cluster.presence,
    marks: cluster.marks,
    redis: cluster.redis,
    attachments: attachmentsFrom(config, store, ids, now),
    lifecycle: cluster,
  };
  // The delivery engine handles what other nodes send (deliver, kick, ack, pull), the social caches
  // their invalidations; both are created below (a cache that does not exist yet holds nothing stale).
  let delivery: Delivery | undefined;
  let social: Social | undefined;
  let channels: Channels | undefined;
  let ws: WsTransport | undefined;
  await cluster.bus
    .start((entry, from) => {
      if (entry.kind === "sessions") return ws?.act(entry);
      if (entry.kind === "invalidate") {
        // A revocation or deletion on another node: this node's memory of the account's sessions goes too.
        if (entry.change.kind === "user") base.accounts.liveness.forget(entry.change.userId);
        return social?.facts.invalidate(entry.change, true);
      }
      if (entry.kind === "channel") return channels?.fanout.enqueue(entry);
      if (delivery) return delivery.core.onBus(entry, from);
      log.debug("bus entry before delivery started", { kind: entry.kind, from });
    })
    .catch(async (e: unknown) => {
      await undo();
      throw e;
    });

  // Social emits S2C through delivery's notifier, and delivery asks social's graph: a late-bound notifier.
  // Delivery pushes through the transport's registry, created below.
  const transportSessions: SessionRegistry = {
    sessionsOf: (u) => ws?.registry.sessionsOf(u) ?? [],
    session: (u, d) => ws?.registry.session(u, d),
  };
  const notifier: Notifier = {
    notify: (...a) => delivery!.notifier.notify(...a),
    tell: (...a) => delivery!.notifier.tell(...a),
  };
  social = createSocial(base, { notifier: opts.notifier ?? notifier });
  // Other nodes drop the same cache entries at once rather than after the TTL (sent before any notice of the change).
  social.facts.onInvalidate((change) => cluster.broadcast({ kind: "invalidate", change }));
  delivery = createDelivery(base, {
    sessions: opts.delivery?.sessions ?? transportSessions,
    social: opts.delivery?.social ?? social.graph,
  });
  // Its watermark goes in before this node stores a message (src/delivery/floors.ts).
  await delivery.start();
  const services: Services = { ...base, delivery };
  // Deliver entries for this node's devices may not have been sent while Redis was away: they pull.
  // And devices elsewhere whose messages this node stored while cut off (its presence lookups failed) pull.
  cluster.onRecovered(() => {
    delivery.core.catchUp().catch((err: unknown) => log.warn("delivery catch-up failed", { err }));
    delivery.core.pullElsewhere().catch((err: unknown) => log.warn("pull requests to other nodes failed", { err }));
  });
  await seedAssistants(store.db, services.ids, assistantsFromConfig(config.assistants));

  // Accounts whose logout grace period is over are deleted by whichever node sweeps first.
  const logout = new AccountLogout(store, config.logoutGraceDays, now);
  let sweeping: Promise<void> = Promise.resolve();
  // Uploads never completed go too (object, then row), one batch per sweep.
  const sweepAttachments = async () => {
    const n = (await base.attachments?.sweep()) ?? 0;
    if (n) log.info("unfinished uploads deleted", { count: n });
  };
  const sweepLogouts = async () => {
    const gone = await logout.sweep();
    for (const userId of gone) {
      social.facts.invalidate({ kind: "user", userId }, true); // the cut announces it to the other nodes
      sessions.cut({ userId, reason: "account_deleted" });
    }
    if (gone.length) log.info("accounts deleted", { count: gone.length });
  };
  const logouts = (): Promise<void> => sweepLogouts().catch((err: unknown) => log.warn("account logout sweep failed", { err }));
  const sweep = () =>
    (sweeping = Promise.all([logouts(), sweepAttachments().catch((err: unknown) => log.warn("attachment sweep failed", { err }))]).then(() => {}));
  // At start, accounts only: an object store that does not answer must not hold the node back.
  await (sweeping = logouts());
  const sweeper = setInterval(sweep, LOGOUT_SWEEP_MS);
  sweeper.unref();

  const e2ee = await createE2ee(services, { notifier: opts.notifier ?? notifier, facts: social.facts });
  // Channel pushes go to this node's sessions (the transport, created below) and to the other nodes over the bus.
  const local: LocalPush = {
    users: () => ws?.local.users() ?? [][Symbol.iterator](),
    get userCount() {
      return ws?.local.userCount ?? 0;
    },
    online: (u) => ws?.local.online(u) ?? false,
    push: (u, action, payload) => ws?.local.push(u, action, payload) ?? 0,
  };
  const channelArea = createChannels(services, {
    local,
    broadcast: (event) => cluster.broadcast({ kind: "channel", ...event }),
    nodesOf: async (u) => [...new Set((await cluster.presence.lookup([u])).get(u)?.map((e) => e.nodeId) ?? [])],
    sendTo: (n, event) => cluster.bus.send(n, { kind: "channel", ...event }),
    ...(opts.payments ? { payments: opts.payments } : {}),
  });
  channels = channelArea;
  const http = createHttpApp(services, social, e2ee, channelArea);
  ws = createWsTransport(services, opts.engine ?? delivery.engine);
  const transport = ws;
  let server: Server<Conn>;
  // Filled in once the port is bound (PORT=0 picks one): init's ws_url when IBIS_PUBLIC_WS_URL is empty.
  let ownWsUrl = "";
  const tls = config.tlsCert ? { cert: Bun.file(config.tlsCert), key: Bun.file(config.tlsKey) } : undefined;
  try {
    server = Bun.serve<Conn>({
      hostname: config.host,
      port: config.port,
      tls,
      maxRequestBodySize: config.wsMaxPayload,
      // Several worker processes share the port (src/cluster/workers.ts).
      reusePort: config.workers > 1,
      // Production serving in every environment: no dev-server bundling or HMR for the chat page.
      development: false,
      routes: {
        ...chatPageRoutes,
        // Matched by Bun on the path alone (the query may carry the browser's token): no URL parsed per handshake.
        "/ws": (req: Request, srv: Server<Conn>) => {
          if (cluster.draining) {
            metrics.wsRefused(503);
            return Response.json(preBusinessError(503, "server restarting", "reconnect to another node"), { status: 503 });
          }
          return transport.upgrade(req, srv);
        },
      },
      fetch(req, srv) {
        return http.fetch(req, { ip: srv.requestIP(req)?.address ?? "", wsUrl: ownWsUrl });
      },
      websocket: transport.websocket,
    });
  } catch (e) {
    // Port taken (or refused): undo what started above, the cluster side (bus, presence, node id) included.
    transport.closeAll(CLOSE_RECONNECT, CLOSE_RECONNECT_REASON);
    clearInterval(sweeper);
    await sweeping;
    await delivery.stop();
    await cluster.drain();
    await undo();
    throw e;
  }
  const port = server.port!;
  const stopLoopMonitor = config.metrics ? monitorEventLoop() : undefined;
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  ownWsUrl = localWsUrl(config.host, port, tls !== undefined);
  log.info("ibis listening", { port, node_id: nodeId, store: store.kind });

  let stopped = false;
  let stopStep: string | undefined;
  return {
    services,
    server,
    ws,
    port,
    url: `${tls ? "https" : "http"}://${host}:${port}`,
    social,
    channels: channelArea,
    http,
    sweepLogouts: logouts,
    get stopStep() {
      return stopStep;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      // Shutdown order (docs/cluster.md): not ready → grace → close sockets → flush, presence → stop.
      cluster.startDraining();
      stopStep = "grace";
      if (config.shutdownGraceMs > 0) await Bun.sleep(config.shutdownGraceMs);
      ws.closeAll(CLOSE_RECONNECT, CLOSE_RECONNECT_REASON); // Bun runs each close handler (engine.onClose) synchronously
      stopStep = "cluster drain";
      await cluster.drain();
      stopStep = "http server";
      await server.stop(true);
      stopStep = "delivery flush";
      await delivery.stop();
      stopStep = "channel fan-out";
      await channelArea.fanout.idle();
      clearInterval(sweeper);
      stopLoopMonitor?.();
      stopStep = "sweeps";
      await sweeping;
      stopStep = "cluster close";
      await cluster.close();
      stopStep = "store close";
      if (closeStore) await store.close();
      stopStep = undefined;
    },
  };
}

function attachmentsFrom(config: Config, store: Store, ids: IdGenerator, now: () => number): Attachments | undefined {
  if (!config.s3Endpoint || !config.s3Bucket) return undefined;
  const target = { endpoint: config.s3Endpoint, bucket: config.s3Bucket, region: config.s3Region, accessKeyId: config.s3AccessKey, secretAccessKey: config.s3SecretKey };
  const limits = {
    maxBytes: config.attachmentMaxBytes,
    uploadTtl: config.attachmentUploadTtl,
    downloadTtl: config.attachmentDownloadTtl,
    pendingMs: config.attachmentPendingHours * 3_600_000,
  };
  return new Attachments(store, ids, target, limits, now);
}

/** A configured key that does not load is a configuration error (named, never echoed). */
async function loginRsaOrRefuse(config: Config, store: Store): Promise<LoginRsa> {
  try {
    return await loadLoginRsa(config.loginRsaPrivateKey, store);
  } catch {
    throw new ConfigError(`${fields.loginRsaPrivateKey.env} is not a PKCS#8 PEM RSA private key`);
  }
}
