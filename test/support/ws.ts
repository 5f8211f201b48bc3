/** WebSocket test helpers: users with tokens, SDK connections to a test node, raw handshakes. */
import { users } from "../../src/db/schema/index.ts";
import { IbisConnection, type ConnectOptions } from "../../src/client/index.ts";
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
