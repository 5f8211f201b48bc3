/** WebSocket test helpers: users with tokens, SDK connections to a test node, raw handshakes. */
import { connect as tcpConnect, type Socket } from "node:net";
import { users } from "../../src/db/schema/index.ts";
import { IbisConnection, newMessageId, type ConnectOptions } from "../../src/client/index.ts";
import type { ImMessage } from "../../src/delivery/ports.ts";
import type { Config } from "../../src/config/index.ts";
import type { StoreKind } from "../../src/db/store.ts";
import type { StartOptions } from "../../src/node.ts";
import { startTestNode, type TestNode } from "./node.ts";
import { RecordingEngine } from "./ws-engine.ts";

export interface TestUser {
  readonly userId: bigint;
  readonly deviceId: string;
  readonly token: string;
  readonly refreshtoken: string;
}

/** Inserts a user (no auth routes needed) and issues a token pair for `deviceId`. */
export async function createUser(node: TestNode, deviceId = "dev-1"): Promise<TestUser> {
  const userId = node.services.ids.next();
  await node.services.store.db.insert(users).values({ id: userId, account: `u${userId}`, passwordHash: "x" });
  return { userId, deviceId, ...(await node.services.tokens.pair(userId, deviceId)) };
}

/** A test node whose transport talks to a RecordingEngine. */
export async function startWsNode(
  kind: StoreKind = "pglite",
  overrides: Partial<Config> = {},
  opts: Omit<StartOptions, "store" | "engine"> = {},
): Promise<{ node: TestNode; engine: RecordingEngine }> {
  const engine = new RecordingEngine();
  const node = await startTestNode(kind, { heartbeatInterval: 60_000, ...overrides }, { ...opts, engine });
  return { node, engine };
}

/** Opens an SDK connection for `user` (svc.v2 unless `protocols` says otherwise). */
export function connect(node: TestNode, user: TestUser, opts: Partial<ConnectOptions> = {}): Promise<IbisConnection> {
  return IbisConnection.open({ url: node.url, token: user.token, deviceId: user.deviceId, deviceType: "desktop", ...opts });
}

/** The sessions of `user` on the node, once its open has run. */
export async function sessionOf(node: TestNode, user: TestUser) {
  for (let i = 0; i < 200; i++) {
    const s = node.ws.registry.session(user.userId, user.deviceId);
    if (s) return s;
    await Bun.sleep(5);
  }
  throw new Error("session never registered");
}

/** A plain C2C text message from `from` to `to` with a fresh client id. */
export function c2c(from: bigint, to: bigint, text = "hi"): ImMessage {
  return { id: newMessageId("C2C"), type: "C2C", from, to, msg_type: "text", payload: { text }, server_ts: 0 };
}

/** A handshake written by hand over TCP (to read the raw 101 answer, or to stop reading like a slow consumer). */
export async function rawHandshake(node: TestNode, headers: Record<string, string>): Promise<{ sock: Socket; head: string }> {
  const sock = tcpConnect({ port: node.port, host: "127.0.0.1" });
  await new Promise((r) => sock.once("connect", r));
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  sock.write(
    `GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
  );
  const head = await new Promise<string>((r) => sock.once("data", (d: Buffer) => r(d.toString("latin1"))));
  return { sock, head };
}
