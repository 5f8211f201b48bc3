/** Two Ibis nodes in this process sharing one fresh store and one Redis (under a key prefix of their own). */
import { testConfig, type Config } from "../../src/config/index.ts";
import type { StoreKind } from "../../src/db/store.ts";
import { startIbis, type IbisNode } from "../../src/node.ts";
import { connect, dropPrefix, sharedRedisUrl, uniquePrefix } from "../bus/redis-fixture.ts";
import { freshStore, type TestStore } from "./stores.ts";

export interface TwoNodes {
  readonly a: IbisNode;
  readonly b: IbisNode;
  readonly store: TestStore;
  /** Stops both nodes, drops the store and the Redis keys. */
  stop(): Promise<void>;
}

export async function startTwoNodes(kind: StoreKind, overrides: Partial<Config> = {}): Promise<TwoNodes> {
  const store = await freshStore(kind);
  const prefix = uniquePrefix();
  const config = testConfig({ redisUrl: sharedRedisUrl(), redisPrefix: prefix, nodeId: undefined, heartbeatInterval: 60_000, ...overrides });
  const a = await startIbis(config, { store: store.store });
  const b = await startIbis(config, { store: store.store });
  return {
    a,
    b,
    store,
    async stop() {
      await a.stop();
      await b.stop();
      await store.dispose();
      const redis = await connect();
      await dropPrefix(redis, prefix);
      redis.disconnect();
    },
  };
}
