import type { Config } from "./config/index.ts";
import type { Accounts } from "./domain/auth/accounts.ts";
import type { LoginRsa } from "./domain/auth/login-rsa.ts";
import type { TokenService } from "./domain/auth/tokens.ts";
import type { Store } from "./db/store.ts";
import type { Delivery } from "./delivery/index.ts";
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
  /** Users and devices; `isActive` is the liveness check behind every token. */
  readonly accounts: Accounts;
  /** Present when IBIS_LOGIN_RSA is on: the key published in init and used to unwrap login passwords. */
  readonly loginRsa: LoginRsa | undefined;
  readonly now: () => number;
  /** The delivery engine and notifier, when the node was started with its ports (src/node.ts). */
  readonly delivery?: Delivery;
}
