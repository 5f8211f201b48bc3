import { z } from "zod";
import { BUILT_IN_INIT_SECRET, fields, parseApiKeys, type Config } from "./fields.ts";

export type { Config } from "./fields.ts";
export { fields } from "./fields.ts";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Reads every field from `env` (process.env by default), then applies `overrides` (tests). */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<Config> = {},
): Config {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, field] of Object.entries(fields)) {
    if (key in overrides) {
      out[key] = (overrides as Record<string, unknown>)[key];
      continue;
    }
    const raw = env[field.env];
    const parsed = (field.schema as z.ZodType).safeParse(raw === "" && !field.secret ? undefined : raw);
    if (parsed.success) out[key] = parsed.data;
    else problems.push(`${field.env}: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  }
  if (problems.length) throw new ConfigError(`invalid configuration:\n  ${problems.join("\n  ")}`);
  const config = out as Config;
  if (!config.tlsCert !== !config.tlsKey) {
    throw new ConfigError(`invalid configuration:\n  ${fields.tlsCert.env} and ${fields.tlsKey.env} go together`);
  }
  const refusals = productionRefusals(config);
  if (refusals.length) throw new ConfigError(`refusing to start in production:\n  ${refusals.join("\n  ")}`);
  return config;
}

const PRODUCTION_MIN_ARGON2_KIB = 19_456;

/** Spec §5.7: what production must have. Pure, so it is table-tested. */
export function productionRefusals(config: Config): string[] {
  if (config.env !== "production") return [];
  const out: string[] = [];
  if (!config.tokenSecret) out.push(`${fields.tokenSecret.env} (token signing key) is empty`);
  else if (config.tokenSecret.length < 32) out.push(`${fields.tokenSecret.env} must be at least 32 characters`);
  if (!config.fieldKey) out.push(`${fields.fieldKey.env} (database field-encryption key) is empty`);
  if (config.masterCode) out.push(`${fields.masterCode.env} (master verification code) must be empty`);
  if (!config.apiSignature) out.push(`${fields.apiSignature.env} (API signature verification) must be on`);
  else if (!parseApiKeys(config.apiKeys)?.size) out.push(`${fields.apiKeys.env} (per-app signing keys) is empty`);
  if (config.initSecret === BUILT_IN_INIT_SECRET) out.push(`${fields.initSecret.env} is the built-in value shipped with the apps`);
  if (!config.publicWsUrl) out.push(`${fields.publicWsUrl.env} (the ws_url init announces) is empty`);
  for (const key of ["s3Endpoint", "s3Bucket", "s3AccessKey", "s3SecretKey"] as const) {
    if (!config[key]) out.push(`${fields[key].env} (object store for attachments, spec §9.6) is empty`);
  }
  if (embedded(config.databaseUrl) && !config.allowEmbeddedInProduction) {
    out.push(
      `${fields.databaseUrl.env} is the embedded database (no fsync): use PostgreSQL or set ${fields.allowEmbeddedInProduction.env}`,
    );
  }
  if (config.passwordMemoryKib < PRODUCTION_MIN_ARGON2_KIB) {
    out.push(`${fields.passwordMemoryKib.env} must be at least ${PRODUCTION_MIN_ARGON2_KIB}`);
  }
  return out;
}

const embedded = (url: string) => !/^postgres(ql)?:\/\//.test(url);

/** Config for tests and embedded use: defaults plus overrides, no environment. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return loadConfig({}, { env: "test", port: 0, host: "127.0.0.1", logLevel: "warn", ...overrides });
}
