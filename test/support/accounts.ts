/** Account helpers over HTTP: real sign-ups and logins (real device sessions), sockets of those devices. */
import { IbisConnection, type DeviceType } from "../../src/client/index.ts";
import type { IbisNode } from "../../src/node.ts";
import { api } from "./node.ts";

export interface Signed {
  readonly userId: bigint;
  readonly deviceId: string;
  readonly token: string;
  readonly refreshtoken: string;
}

let seq = 0;

/** Signs up (first device) or logs in (more devices) over HTTP: real sessions. */
export async function signIn(node: IbisNode, account: string, deviceId: string, deviceType = "ios", nickname?: string): Promise<Signed> {
  const headers = { "X-Device-ID": deviceId, "X-Device-Type": deviceType };
  let res = await api(node, "POST", "/api/v1/passport/login", { body: { account, pwd: "secret-1" }, headers });
  if (res.body.code === 401) res = await api(node, "POST", "/api/v1/passport/signup", { body: { account, pwd: "secret-1", nickname }, headers });
  if (res.body.code !== 0) throw new Error(`sign-in of ${account}: ${res.text}`);
  const p = res.body.payload;
  return { userId: BigInt(p.user_id), deviceId, token: p.token, refreshtoken: p.refreshtoken };
}

export const openSocket = (node: IbisNode, s: Signed, deviceType: DeviceType = "ios") =>
  IbisConnection.open({ url: node.url, token: s.token, deviceId: s.deviceId, deviceType, protocols: ["svc-json"] });

/** Did `ws` receive an S2C with this action (among the events no `next` took)? */
export const saw = (ws: IbisConnection, action: string) => ws.pending.some((e) => e.kind === "message" && e.msg.action === action);

export const uniqueAccount = (name: string) => `${name}${Date.now().toString(36)}${++seq}`;

