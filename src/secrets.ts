import type { Config } from "./config/index.ts";
import { sharedSetting } from "./db/settings.ts";
import type { Store } from "./db/store.ts";

export interface Secrets {
  /** HS256 key for tokens and the admin cookie. */
  readonly tokenSecret: string;
  /** Key for encrypting secret columns (AES-256-GCM, see src/crypto/fields.ts). */
  readonly fieldKey: string;
}

const random = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");

/**
 * Production takes secrets from config only (startup already refused empty
 * ones). Elsewhere an unset secret is generated once and kept in the
 * database, so nodes sharing a database accept each other's tokens.
 */
export async function resolveSecrets(config: Config, store: Store): Promise<Secrets> {
  const pick = async (configured: string, key: string) =>
    configured || (config.env === "production" ? configured : await sharedSetting(store, key, random));
  return {
    tokenSecret: await pick(config.tokenSecret, "dev.token_secret"),
    fieldKey: await pick(config.fieldKey, "dev.field_key"),
  };
}
