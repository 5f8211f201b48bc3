import { IbisConnection, newMessageId, type SubProtocolName } from "../../src/client/index.ts";
import type { ChatType, ImMessage } from "../../src/delivery/ports.ts";
import { api, type TestNode } from "../support/node.ts";

export interface Account {
  readonly userId: bigint;
  readonly account: string;
  /** Access token per device id. */
  readonly tokens: Record<string, string>;
}

let n = 0;

/** Signs up through REST (first device), then logs in from the other devices. */
export async function signup(node: TestNode, name: string, devices: string[]): Promise<Account> {
  const account = `${name}-${Date.now().toString(36)}-${n++}`;
  const [first, ...rest] = devices;
  const res = await api(node, "POST", "/api/v1/passport/signup", {
    body: { account, pwd: "correct horse battery", nickname: name },
    headers: { "x-device-id": first!, "x-device-type": "ios" },
  });
  if (res.body?.code !== 0) throw new Error(`signup failed: ${res.text}`);
  const tokens: Record<string, string> = { [first!]: res.body.payload.token };
  for (const d of rest) {
    const login = await api(node, "POST", "/api/v1/passport/login", {
      body: { account, pwd: "correct horse battery" },
      headers: { "x-device-id": d, "x-device-type": "web" },
    });
    tokens[d] = login.body.payload.token;
  }
  return { userId: BigInt(res.body.payload.user_id), account, tokens };
}

export async function befriend(node: TestNode, a: Account, b: Account): Promise<void> {
  const [da] = Object.keys(a.tokens);
  const [db] = Object.keys(b.tokens);
  const add = await api(node, "POST", "/api/v1/friend/add", { token: a.tokens[da!], body: { to: b.userId } });
  if (add.body?.code !== 0) throw new Error(`friend add failed: ${add.text}`);
  const ok = await api(node, "POST", "/api/v1/friend/confirm", { token: b.tokens[db!], body: { from: a.userId } });
  if (ok.body?.code !== 0) throw new Error(`friend confirm failed: ${ok.text}`);
}

export function connect(node: TestNode, who: Account, deviceId: string, protocol: SubProtocolName = "svc.v2") {
  return IbisConnection.open({ url: node.url, token: who.tokens[deviceId]!, deviceId, protocols: [protocol] });
}

export function message(type: ChatType, from: bigint, to: bigint, payload: Record<string, unknown> = { text: "hello" }): ImMessage {
  return { id: newMessageId(type), type, from, to, payload, msg_type: "text", server_ts: 0 };
}

/** The next business message of `type` whose id is `id` (or any of that type). */
export const ofType = (type: string, id?: string) => (m: Record<string, any>) => m.type === type && (id === undefined || m.id === id || m.in_reply_to === id);
export const withAction = (action: string) => (m: Record<string, any>) => m.type === "S2C" && m.action === action;
