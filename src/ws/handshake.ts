/**
 * GET /ws before the upgrade (spec §4.5, §5.2, §5.3): who connects, from
 * which device. Browsers cannot set headers on a WebSocket, so the token and
 * device may come as `?token=&did=&dtype=` instead (docs/websocket.md).
 */
import { bearer } from "../http/auth.ts";
import { VERDICT_REFUSAL, type SessionVerdict } from "../domain/auth/liveness.ts";
import { DEVICE_ID, DEVICE_TYPES } from "../domain/auth/rules.ts";
import type { TokenService } from "../domain/auth/tokens.ts";
import type { ConnIdentity } from "./conn.ts";
import type { WindowCounter } from "./throttle.ts";

export { DEVICE_TYPES };
// The canonical strings, so a connection keeps a shared one rather than its header's copy.
const DEVICE_TYPE_OF: ReadonlyMap<string, string> = new Map([...DEVICE_TYPES].map((t) => [t, t]));

export interface HandshakeRefusal {
  readonly ok: false;
  readonly status: 400 | 401 | 429 | 500;
  readonly title: string;
  readonly content: string;
}
export type HandshakeResult = { readonly ok: true; readonly identity: ConnIdentity } | HandshakeRefusal;

export interface HandshakeThrottles {
  readonly perIp: WindowCounter;
  readonly perDevice: WindowCounter;
  readonly off: boolean;
}

const refuse = (status: HandshakeRefusal["status"], title: string, content: string): HandshakeRefusal => ({
  ok: false,
  status,
  title,
  content,
});

/** The handshake's credentials: headers first, then the browser query form (the URL is parsed only then). */
export function credentialsOf(req: Request): { token?: string; deviceId?: string; deviceType?: string } {
  const h = req.headers;
  const token = bearer(h.get("authorization") ?? undefined);
  const deviceId = h.get("x-device-id");
  const deviceType = h.get("x-device-type");
  if (token !== undefined && deviceId !== null && deviceType !== null) return { token, deviceId, deviceType };
  const q = new URL(req.url).searchParams;
  return {
    token: token ?? (q.get("token") || undefined),
    deviceId: deviceId ?? q.get("did") ?? undefined,
    deviceType: deviceType ?? q.get("dtype") ?? undefined,
  };
}

/**
 * Authenticates a handshake. The per-IP counter is charged first (before any
 * token work); the per-device counter only once the token proved who is
 * asking, keyed by that user's device: naming someone else's device id without
 * their token never locks that device out.
 */
export function authenticate(
  req: Request,
  ip: string,
  tokens: TokenService,
  throttles: HandshakeThrottles,
  now: number,
  /** The check behind every token (deleted, suspended, signed out: refused, as on REST); a verdict from memory is given at once. */
  check: (userId: bigint, sessionDeviceId: string, gen: number) => SessionVerdict | Promise<SessionVerdict>,
): HandshakeResult | Promise<HandshakeResult> {
  if (!throttles.off && !throttles.perIp.hit(ip, now)) {
    return refuse(429, "rate_limited", "too many handshakes from this address");
  }
  const cred = credentialsOf(req);
  if (!cred.deviceId) return refuse(401, "unauthorized", "missing device id (X-Device-ID or did)");
  if (!DEVICE_ID.test(cred.deviceId)) return refuse(401, "unauthorized", "invalid device id");
  const asked = cred.deviceType?.toLowerCase() ?? "";
  const deviceType = asked === "" ? "" : DEVICE_TYPE_OF.get(asked);
  if (deviceType === undefined) {
    return refuse(401, "unauthorized", "invalid device type (ios, android, web or desktop)");
  }
  if (!cred.token) return refuse(401, "unauthorized", "missing access token");
  const claims = tokens.verifySync(cred.token, "access");
  if (!claims.ok) return refuse(401, "unauthorized", claims.error.msg);
  const { userId, deviceId: claimed, expiresAt, gen } = claims.value;
  if (claimed !== "" && claimed !== cred.deviceId) return refuse(401, "unauthorized", "device id does not match the token");
  const deviceId = cred.deviceId;
  const admit = (verdict: SessionVerdict): HandshakeResult => {
    if (verdict !== "ok") return refuse(401, ...VERDICT_REFUSAL[verdict]);
    if (!throttles.off && !throttles.perDevice.hit(`${userId}:${deviceId}`, now)) {
      return refuse(429, "rate_limited", "too many handshakes for this device");
    }
    return { ok: true, identity: { userId, deviceId, deviceType, expiresAt, sessionDeviceId: claimed, gen } };
  };
  const verdict = check(userId, claimed, gen);
  return typeof verdict === "string" ? admit(verdict) : verdict.then(admit);
}
