import type { StoreKind } from "../../src/db/store.ts";
import { testConfig, type Config } from "../../src/config/index.ts";
import { startIbis, type IbisNode, type StartOptions } from "../../src/node.ts";
import { freshStore } from "./stores.ts";

export interface TestNode extends IbisNode {
  readonly kind: StoreKind;
}

// Cheapest argon2id: suites sign up many users; production cost is checked by config tests.
const MIN_ARGON2_KIB = 1024;

/** A real Ibis node on an ephemeral loopback port over a fresh store of `kind`. */
export async function startTestNode(
  kind: StoreKind,
  overrides: Partial<Config> = {},
  opts: Omit<StartOptions, "store"> = {},
): Promise<TestNode> {
  const fresh = await freshStore(kind);
  let node: IbisNode;
  try {
    node = await startIbis(testConfig({ nodeId: 1, passwordMemoryKib: MIN_ARGON2_KIB, ...overrides }), { ...opts, store: fresh.store });
  } catch (e) {
    await fresh.dispose();
    throw e;
  }
  return {
    ...node,
    kind,
    async stop() {
      await node.stop();
      await fresh.dispose();
    },
  };
}

/** fetch against a node, JSON through the project codec. */
export async function api(
  node: IbisNode,
  method: string,
  path: string,
  init: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: string } = {},
): Promise<{ status: number; body: any; text: string; headers: Headers }> {
  const { stringifyJson, parseJson } = await import("../../src/protocol/json.ts");
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let payload: string | undefined = init.raw;
  if (init.body !== undefined) {
    payload = stringifyJson(init.body);
    headers["content-type"] = "application/json";
  }
  const res = await fetch(node.url + path, { method, headers, body: payload });
  const text = await res.text();
  let body: unknown;
  try {
    body = parseJson(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text, headers: res.headers };
}
