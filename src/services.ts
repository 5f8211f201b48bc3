import type Redis from "ioredis";
import type { Bus } from "./bus/bus.ts";
import type { Attachments } from "./domain/attachments/attachments.ts";
import type { Lifecycle } from "./cluster/lifecycle.ts";
import type { Presence } from "./cluster/presence.ts";
import type { Config } from "./config/index.ts";
import type { Accounts } from "./domain/auth/accounts.ts";
import type { LoginRsa } from "./domain/auth/login-rsa.ts";
import type { SessionControl } from "./domain/auth/revocation.ts";
import type { TokenService } from "./domain/auth/tokens.ts";
import type { Store } from "./db/store.ts";
import type { Delivery } from "./delivery/index.ts";
import type { MarkShare } from "./delivery/marks.ts";
import type { IdGenerator } from "./ids/tsid.ts";
import type { Logger } from "./log.ts";
import type { Secrets } from "./secrets.ts";

/**
 * What one Ibis node holds, built once in src/node.ts and passed to the
 * transports. Domain modules take the narrow pieces they need, not this.
 */
export interface Services {
  readonly config: Config;
  readonly log: Logger;
  readonly store: Store;
  readonly ids: IdGenerator;
  readonly nodeId: number;
  readonly secrets: Secrets;
  readonly tokens: TokenService;
  /** Users and devices; `liveness.check` is the check behind every token, `sessions` their revocation. */
  readonly accounts: Accounts;
  /** Session cuts (logout, sign-out, suspension, deletion) and device-type notices, on every node (src/node.ts). */
  readonly sessions: SessionControl;
  /** Present when IBIS_LOGIN_RSA is on: the key published in init and used to unwrap login passwords. */
  readonly loginRsa: LoginRsa | undefined;
  readonly now: () => number;
  /** Cross-node entries (docs/cluster.md); in process when REDIS_URL is unset. */
  readonly bus: Bus;
  /** Which node holds each connected device. */
  readonly presence: Presence;
  /** Acknowledged marks not committed yet, as every node sees them (Redis in a cluster; absent: this process only). */
  readonly marks?: MarkShare;
  /** The shared Redis command connection when REDIS_URL is set (cross-node state such as signature nonces). */
  readonly redis?: Redis;
  /** `draining` (refuse new /ws handshakes) and readiness. */
  readonly lifecycle: Lifecycle;
  /** Direct uploads to the object store; absent when IBIS_S3_* is not configured (development). */
  readonly attachments?: Attachments;
  /** The delivery engine and notifier (src/node.ts always sets it; optional for narrow test harnesses). */
  readonly delivery?: Delivery;
}
