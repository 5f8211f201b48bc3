import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadConfig, productionRefusals, testConfig } from "../../src/config/index.ts";
import { renderConfigDoc } from "../../scripts/config-doc.ts";

const ROOT = join(import.meta.dir, "../..");
const TOKEN = "t".repeat(40) + "-token-secret-value";
const FIELD = "field-key-secret-value-0123456789";
const INIT = "init-secret-of-this-deployment";
const APP_KEY = "ios:" + "a".repeat(32);
const good = {
  IBIS_ENV: "production",
  IBIS_TOKEN_SECRET: TOKEN,
  IBIS_FIELD_KEY: FIELD,
  IBIS_API_SIGNATURE: "on",
  IBIS_API_KEYS: APP_KEY,
  IBIS_INIT_SECRET: INIT,
  IBIS_PUBLIC_WS_URL: "wss://im.example.com/ws",
  DATABASE_URL: "postgres://ibis@db.internal:5432/ibis",
  IBIS_S3_ENDPOINT: "https://s3.eu-west-3.amazonaws.com",
  IBIS_S3_BUCKET: "ibis-attachments",
  IBIS_S3_ACCESS_KEY: "AKIAEXAMPLEKEYID",
  IBIS_S3_SECRET_KEY: "object-store-secret-value",
};

describe("production startup refusals (spec §5.7)", () => {
  test("a complete production environment loads", () => {
    const c = loadConfig(good);
    expect(c.env).toBe("production");
    expect(c.apiSignature).toBe(true);
  });

  test.each([
    ["token signing key empty", { IBIS_TOKEN_SECRET: "" }, "IBIS_TOKEN_SECRET"],
    ["token signing key too short", { IBIS_TOKEN_SECRET: "short-secret-value" }, "IBIS_TOKEN_SECRET"],
    ["field-encryption key empty", { IBIS_FIELD_KEY: "" }, "IBIS_FIELD_KEY"],
    ["master code set", { IBIS_MASTER_CODE: "123456" }, "IBIS_MASTER_CODE"],
    ["API signature off", { IBIS_API_SIGNATURE: "off" }, "IBIS_API_SIGNATURE"],
    ["API signature unset", { IBIS_API_SIGNATURE: undefined }, "IBIS_API_SIGNATURE"],
    ["argon2id memory below the OWASP minimum", { IBIS_PASSWORD_MEMORY_KIB: "4096" }, "IBIS_PASSWORD_MEMORY_KIB"],
    ["signature on without app keys", { IBIS_API_KEYS: "" }, "IBIS_API_KEYS"],
    ["built-in init secret", { IBIS_INIT_SECRET: undefined }, "IBIS_INIT_SECRET"],
    ["no public ws_url (init would echo a Host header)", { IBIS_PUBLIC_WS_URL: undefined }, "IBIS_PUBLIC_WS_URL"],
    ["embedded database on disk", { DATABASE_URL: undefined }, "IBIS_ALLOW_EMBEDDED_IN_PRODUCTION"],
    ["embedded database in memory", { DATABASE_URL: "memory://" }, "IBIS_ALLOW_EMBEDDED_IN_PRODUCTION"],
    ["no object-store endpoint", { IBIS_S3_ENDPOINT: undefined }, "IBIS_S3_ENDPOINT"],
    ["no bucket", { IBIS_S3_BUCKET: undefined }, "IBIS_S3_BUCKET"],
    ["no object-store access key", { IBIS_S3_ACCESS_KEY: "" }, "IBIS_S3_ACCESS_KEY"],
    ["no object-store secret key", { IBIS_S3_SECRET_KEY: "" }, "IBIS_S3_SECRET_KEY"],
  ] as [string, Record<string, string | undefined>, string][])("%s → refused, naming %s", (_n, change, name) => {
    const env = { ...good, ...change };
    let err: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toContain(name);
    for (const v of Object.values(env)) if (v && v.length > 5 && v !== "production") expect(msg).not.toContain(v);
  });

  test("the embedded database is accepted when the operator says so", () => {
    expect(loadConfig({ ...good, DATABASE_URL: undefined, IBIS_ALLOW_EMBEDDED_IN_PRODUCTION: "1" }).databaseUrl).toBe("");
  });

  test("all refusals at once, and none outside production", () => {
    const bad = { ...testConfig(), tokenSecret: "", fieldKey: "", masterCode: "x", apiSignature: false };
    expect(productionRefusals({ ...bad, env: "production" })).toHaveLength(11);
    expect(productionRefusals({ ...bad, env: "development" })).toEqual([]);
    expect(productionRefusals({ ...bad, env: "test" })).toEqual([]);
  });
});

describe("config parsing", () => {
  test("IBIS_FEATURES must be a JSON object", () => {
    expect(() => loadConfig({ IBIS_FEATURES: "[1]" })).toThrow(ConfigError);
    expect(() => loadConfig({ IBIS_FEATURES: "{nope" })).toThrow(/IBIS_FEATURES/);
    expect(loadConfig({ IBIS_FEATURES: '{"e2ee":{"enabled":false}}' }).features).toContain("e2ee");
  });

  test("IBIS_API_KEYS is app:key pairs with keys of 32+ characters; TLS certificate and key go together", () => {
    expect(() => loadConfig({ IBIS_API_KEYS: "ios:short" })).toThrow(/IBIS_API_KEYS/);
    expect(() => loadConfig({ IBIS_API_KEYS: `nocolon${"a".repeat(32)}` })).toThrow(/IBIS_API_KEYS/);
    expect(() => loadConfig({ IBIS_API_KEYS: `${APP_KEY},${APP_KEY}` })).toThrow(/IBIS_API_KEYS/);
    expect(loadConfig({ IBIS_API_KEYS: `${APP_KEY}, web:${"b".repeat(40)}` }).apiKeys).toContain("web:");
    expect(() => loadConfig({ IBIS_TLS_CERT: "/etc/ibis/cert.pem" })).toThrow(/IBIS_TLS_KEY/);
    expect(() => loadConfig({ IBIS_PUBLIC_WS_URL: "https://x/ws" })).toThrow(/IBIS_PUBLIC_WS_URL/);
  });

  test("booleans and integers from env text", () => {
    const c = loadConfig({ IBIS_THROTTLE_OFF: "yes", IBIS_LOGIN_PER_IP: "5", PORT: "" });
    expect(c.throttleOff).toBe(true);
    expect(c.loginPerIp).toBe(5);
    expect(c.port).toBe(9800);
    expect(() => loadConfig({ PORT: "70000" })).toThrow(/PORT/);
    expect(loadConfig({}).deliveryWriteDepth).toBe(2);
    expect(loadConfig({ IBIS_DELIVERY_WRITE_DEPTH: "1" }).deliveryWriteDepth).toBe(1);
    expect(() => loadConfig({ IBIS_DELIVERY_WRITE_DEPTH: "0" })).toThrow(/IBIS_DELIVERY_WRITE_DEPTH/);
  });
});

describe("bun src/main.ts in production without a usable secret", () => {
  test.each([
    ["missing", undefined],
    ["too short", "short-token-secret-value-xyz"],
  ])("token secret %s: exits non-zero, names the variable, prints no secret value", async (_n, tokenSecret) => {
    const env: Record<string, string | undefined> = { ...process.env, ...good, DATABASE_URL: "memory://", PORT: "0" };
    if (tokenSecret === undefined) delete env.IBIS_TOKEN_SECRET;
    else env.IBIS_TOKEN_SECRET = tokenSecret;
    const proc = Bun.spawn(["bun", "src/main.ts"], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
    const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect(code).toBe(78);
    expect(err).toContain("IBIS_TOKEN_SECRET");
    expect(out + err).not.toContain(FIELD);
    if (tokenSecret) expect(out + err).not.toContain(tokenSecret);
  });
});

describe("docs/config.md", () => {
  test("is generated from the current field table", () => {
    expect(readFileSync(join(ROOT, "docs/config.md"), "utf8")).toBe(renderConfigDoc());
  });
});
