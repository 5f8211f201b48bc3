/** Shared setup of the channel suites: a real node, users inserted directly, envelope calls and channel shortcuts. */
import type { Config } from "../../src/config/index.ts";
import type { StoreKind } from "../../src/db/store.ts";
import { IbisConnection } from "../../src/client/index.ts";
import { payloadOf, socialEnv, type SocialEnv, type TestUser } from "./social.support.ts";

export { payloadOf, type TestUser };

export const TUPLES = {
  public_free: { visibility: 0, access_type: 0, join_policy: 0 },
  private_free: { visibility: 1, access_type: 0, join_policy: 1 },
  public_paid: { visibility: 0, access_type: 1, join_policy: 3 },
  private_paid: { visibility: 1, access_type: 1, join_policy: 3 },
} as const;

export interface ChannelEnv extends SocialEnv {
  /** Creates a channel as `owner`; returns its object. */
  channel(owner: TestUser, tuple?: keyof typeof TUPLES, extra?: Record<string, unknown>): Promise<any>;
  publish(author: TestUser, channelId: bigint, content?: string, extra?: Record<string, unknown>): Promise<any>;
  /** Envelope code of a call. */
  code(user: TestUser | undefined, method: string, path: string, body?: unknown): Promise<number>;
  /** An SDK socket for the user's device (svc-json unless told). */
  socket(user: TestUser, protocols?: string[]): Promise<IbisConnection>;
  /** Waits until every queued channel push of the node has gone out. */
  settle(): Promise<void>;
}

export async function channelEnv(kind: StoreKind, overrides: Partial<Config> = {}, now?: () => number): Promise<ChannelEnv> {
  const env = await socialEnv(kind, { throttleOff: true, ...overrides }, now);
  const sockets: IbisConnection[] = [];
  return {
    ...env,
    async channel(owner, tuple = "public_free", extra = {}) {
      return payloadOf(await env.call(owner, "POST", "/api/v1/channel/create", { name: "news", ...TUPLES[tuple], ...extra }));
    },
    async publish(author, channelId, content = "hello", extra = {}) {
      return payloadOf(await env.call(author, "POST", `/api/v1/channel/${channelId}/message`, { content, msg_type: "text", ...extra }));
    },
    async code(user, method, path, body) {
      const res = await env.call(user, method, path, body);
      return res.body?.code ?? res.status;
    },
    async socket(user, protocols = ["svc-json"]) {
      const conn = await IbisConnection.open({
        url: env.node.url,
        token: user.token,
        deviceId: `dev-${user.id}`,
        deviceType: "desktop",
        protocols,
      });
      sockets.push(conn);
      // The session is registered once open has run on the server.
      for (let i = 0; i < 200 && !env.node.ws.local.online(user.id); i++) await Bun.sleep(5);
      return conn;
    },
    settle: () => env.node.channels.fanout.idle(),
    async stop() {
      await Promise.all(sockets.map((s) => s.close()));
      await env.stop();
    },
  };
}
