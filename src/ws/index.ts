/**
 * The WebSocket edge (spec §4.5): GET /ws handshake and negotiation, one
 * `Conn` per socket, uplink dispatch into the delivery engine, the session
 * registry delivery sends through, heartbeats, token expiry and backpressure.
 * Decisions and close codes: docs/websocket.md.
 */
import type { Server, WebSocketHandler } from "bun";
import type { SessionsEntry } from "../bus/bus.ts";
import type { DeliveryEngine, Notifier, Session, SessionRegistry } from "../delivery/ports.ts";
import { metrics } from "../metrics/index.ts";
import type { Services } from "../services.ts";
import { CloseCode } from "./close-codes.ts";
import { Conn, handlingMessageOf, type ConnContext } from "./conn.ts";
import { dispatch, type UplinkDeps } from "./dispatch.ts";
import { ExpiryWatch } from "./expiry.ts";
import { authenticate, type HandshakeResult, type HandshakeThrottles } from "./handshake.ts";
import { FrameHeartbeat, V2_TOPIC } from "./heartbeat.ts";
import { Hub } from "./hub.ts";
import { negotiate, PROTOCOL_NAMES, Proto } from "./negotiate.ts";
import { connectionError, s2cNotice } from "./s2c.ts";
import { UserThrottles, WindowCounter } from "./throttle.ts";

export { CloseCode, mayReconnect } from "./close-codes.ts";
export { negotiate, PROTOCOL_NAMES, Proto, type ProtocolName } from "./negotiate.ts";
export type { Conn } from "./conn.ts";

/** What the delivery engine (and other §6 emitters) get from the transport. */
export interface TransportPorts {
  readonly registry: SessionRegistry;
  /** An S2C to one session, not stored (Notifier.tell). */
  readonly tell: Notifier["tell"];
}

/** The engine, or a factory that receives the transport's ports (the engine sends through the registry). */
export type EngineSource = DeliveryEngine | ((ports: TransportPorts) => DeliveryEngine);

export interface WsTransport extends TransportPorts {
  /** Handles GET /ws: upgrades (returns undefined) or answers with an HTTP error; synchronous when the session is known here. */
  upgrade(req: Request, server: Server<Conn>): Response | undefined | Promise<Response | undefined>;
  /** Handlers and socket options for Bun.serve (limits, idle timeout, backpressure). */
  readonly websocket: WebSocketHandler<Conn>;
  readonly engine: DeliveryEngine;
  /** Runs the token-expiry sweep now (it also runs on a timer; tests with a fake clock call it). */
  sweep(): void;
  /** Sends the next svc.v2 heartbeat ping now; returns its Seq. */
  heartbeat(): number;
  /** This node's online users, and one S2C (not stored) to every session of a user: channel pushes. */
  readonly local: {
    users(): IterableIterator<bigint>;
    readonly userCount: number;
    online(userId: bigint): boolean;
    push(userId: bigint, action: string, payload: Record<string, unknown>): number;
  };
  /** Stops the timers and closes every socket (shutdown). */
  closeAll(code: number, reason: string): void;
  /** A bus `sessions` entry (from any node, this one included): tell the matching sessions here, close them if asked. */
  act(entry: SessionsEntry): void;
}

const HANDSHAKE_DEVICE_WINDOW_MS = 10_000;
const HANDSHAKE_IP_WINDOW_MS = 60_000;

/** The upgrade's answer header per protocol, made once (Bun copies it into the 101 response). */
const ANSWERS: ReadonlyMap<string, Record<string, string>> = new Map(PROTOCOL_NAMES.map((n) => [n, { "Sec-WebSocket-Protocol": n }]));

export function createWsTransport(services: Services, engineSource: EngineSource): WsTransport {
  const { config, log, now, ids, tokens } = services;
  const liveness = services.accounts.liveness;
  const check = (id: bigint, sessionDeviceId: string, gen: number) => liveness.known(id, sessionDeviceId, gen) ?? liveness.check(id, sessionDeviceId, gen);
  const hub = new Hub();
  let server: Server<Conn> | undefined;
  let connSeq = 0;

  const tell: Notifier["tell"] = (session: Session, action, payload, inReplyTo) => {
    session.send(s2cNotice(ids, now(), session.userId, action, payload, inReplyTo));
  };
  const matches = (e: SessionsEntry, c: Conn) =>
    (e.sessionDeviceId === undefined || c.sessionDeviceId === e.sessionDeviceId) &&
    (e.belowGen === undefined || c.gen < e.belowGen) &&
    (e.deviceType === undefined || c.deviceType === e.deviceType);
  const engine = typeof engineSource === "function" ? engineSource({ registry: hub, tell }) : engineSource;

  const ctx: ConnContext = {
    onSlowConsumer(conn) {
      log.warn("ws: slow consumer disconnected", { conn: conn.connId, user: conn.userId, device: conn.deviceId });
      conn.ws.close(CloseCode.SlowConsumer, "slow_consumer");
    },
  };
  const throttles: HandshakeThrottles = {
    perIp: new WindowCounter(config.handshakePerIp, HANDSHAKE_IP_WINDOW_MS),
    perDevice: new WindowCounter(config.handshakePerDevice, HANDSHAKE_DEVICE_WINDOW_MS),
    off: config.throttleOff,
  };
  const expiry = new ExpiryWatch(config.tokenRefreshWindow, {
    askRefresh: (conn, windowMs) =>
      tell(conn, "please_refresh_token", { content: "access token expired; send refresh_token", window_ms: windowMs }),
  });
  const uplink: UplinkDeps = {
    engine,
    log,
    now,
    throttles: new UserThrottles({
      messages: { rate: config.msgRate, burst: config.msgBurst },
      bytes: { rate: config.msgByteRate, burst: Math.max(config.msgByteBurst, config.msgMaxBytes) },
      acks: { rate: config.ackRate, burst: config.ackBurst },
    }),
    msgMaxBytes: config.msgMaxBytes,
    throttleOff: config.throttleOff,
    tell,
    refresh(conn, raw) {
      const id = typeof raw.id === "string" ? raw.id : undefined;
      const token = typeof raw.payload === "object" && raw.payload !== null ? (raw.payload as { token?: unknown }).token : undefined;
      expiry.refresh(conn, token, tokens, check).then(
        (r) =>
          r.ok
            ? tell(conn, "token_refreshed", { expires_at: r.expiresAt }, id)
            : tell(conn, "invalid_message", { reason: "invalid_token", content: r.msg }, id),
        (e: unknown) => log.error("ws: refresh failed", { err: e as Error }),
      );
    },
  };

  const heartbeat = new FrameHeartbeat();
  const sweep = () => {
    const t = now();
    expiry.sweep(t);
    throttles.perIp.prune(t);
    throttles.perDevice.prune(t);
    uplink.throttles.sweep(t);
  };
  const timers = [
    setInterval(() => heartbeat.beat(server), config.heartbeatInterval),
    setInterval(sweep, Math.min(1000, Math.max(25, config.tokenRefreshWindow >> 3))),
  ];
  for (const t of timers) t.unref();

  const reject = (status: number, title: string, content: string) => {
    metrics.wsRefused(status);
    return new Response(connectionError(status, title, content, now()), {
      status,
      headers: { "content-type": "application/json; charset=utf-8" },
    });
  };

  const failed = (e: unknown) => {
    log.error("ws: handshake failed", { err: e as Error });
    return reject(500, "internal", "handshake failed, retry later");
  };

  /** An authenticated handshake upgrades (undefined) or is refused. */
  function admit(req: Request, srv: Server<Conn>, auth: HandshakeResult): Response | undefined {
    if (!auth.ok) return reject(auth.status, auth.title, auth.content);
    if (req.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return reject(400, "bad_request", "GET /ws expects a WebSocket upgrade");
    }
    const neg = negotiate(req.headers.get("sec-websocket-protocol"));
    const conn = neg.ok
      ? new Conn(++connSeq, auth.identity, neg.proto, ctx)
      : new Conn(
          ++connSeq,
          auth.identity,
          -1,
          ctx,
          connectionError(400, "unsupported_protocol", `none of [${neg.offered.join(", ")}] is supported; offer one of ${PROTOCOL_NAMES.join(", ")}`, now()),
        );
    const headers = neg.answer === undefined ? undefined : (ANSWERS.get(neg.answer) ?? { "Sec-WebSocket-Protocol": neg.answer });
    if (srv.upgrade(req, { data: conn, headers })) return undefined;
    return reject(400, "bad_request", "WebSocket upgrade failed");
  }

  return {
    registry: hub,
    tell,
    local: {
      users: () => hub.users(),
      get userCount() {
        return hub.userCount;
      },
      online: (userId) => hub.sessionsOf(userId).length > 0,
      push(userId, action, payload) {
        const sessions = hub.sessionsOf(userId);
        if (sessions.length === 0) return 0;
        // One notice per user, encoded once per sub-protocol across its devices.
        const out = s2cNotice(ids, now(), userId, action, payload);
        for (const s of sessions) s.send(out);
        return sessions.length;
      },
    },
    engine,
    sweep,
    heartbeat: () => heartbeat.beat(server),

    upgrade(req, srv) {
      server ??= srv;
      try {
        // The address only feeds the per-IP counter: not asked for when the throttles are lifted.
        const ip = throttles.off ? "" : (srv.requestIP(req)?.address ?? "unknown");
        const auth = authenticate(req, ip, tokens, throttles, now(), check);
        // Synchronous when the session is known here: the upgrade then happens in this turn, with no promise.
        if (auth instanceof Promise) return auth.then((a) => admit(req, srv, a)).catch(failed);
        return admit(req, srv, auth);
      } catch (e) {
        return failed(e); // answered in the spec's shape, never Bun's default error page
      }
    },

    websocket: {
      maxPayloadLength: config.wsMaxPayload,
      idleTimeout: config.wsIdleTimeout,
      sendPings: true,
      backpressureLimit: config.wsBackpressureLimit,
      closeOnBackpressureLimit: false, // we close with our own code (4004) on the first dropped send
      perMessageDeflate: false,

      open(ws) {
        const conn = ws.data;
        conn.ws = ws;
        conn.openedAt = now();
        if (conn.proto === -1) {
          ws.send(conn.rejection!);
          conn.close(CloseCode.UnsupportedProtocol, "unsupported_protocol");
          return;
        }
        const old = hub.add(conn);
        if (old) {
          tell(old, "logged_another_device", { content: "signed in again on this device elsewhere", device_id: old.deviceId });
          old.close(CloseCode.Replaced, "logged_another_device");
        }
        if (conn.proto === Proto.V2) ws.subscribe(V2_TOPIC);
        expiry.track(conn);
        conn.opened = true;
        metrics.wsOpened(conn.proto);
        engine.onOpen(conn);
      },

      message(ws, message) {
        if (ws.data.closing) return; // closed by us (takeover, expiry, slow consumer): nothing more is taken
        handlingMessageOf(ws.data);
        try {
          dispatch(uplink, ws.data, message);
        } catch (e) {
          log.error("ws: dispatch failed", { conn: ws.data.connId, err: e as Error });
        } finally {
          handlingMessageOf(undefined);
        }
      },

      close(ws) {
        const conn = ws.data;
        conn.closing = true;
        hub.remove(conn);
        expiry.forget(conn);
        if (!conn.opened) return;
        metrics.wsClosed(conn.proto);
        engine.onClose(conn);
      },
    },

    act(entry) {
      const conns = entry.userId === undefined ? [...hub.all()] : (hub.sessionsOf(entry.userId) as readonly Conn[]);
      for (const conn of conns) {
        if (conn.closing || !matches(entry, conn)) continue;
        tell(conn, entry.action, entry.payload);
        if (entry.close) conn.close(entry.close.code, entry.close.reason);
      }
    },

    closeAll(code, reason) {
      for (const t of timers) clearInterval(t);
      for (const conn of [...hub.all()]) conn.close(code, reason);
    },
  };
}
