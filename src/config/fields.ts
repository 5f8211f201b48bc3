import { z } from "zod";

/**
 * The one definition of Ibis configuration. Every field has its environment
 * variable, its default (inside the zod schema) and a one-line description;
 * `loadConfig`, `docs/config.md` (scripts/config-doc.ts) and the startup
 * checks are all derived from this table.
 */
export interface FieldDef<S extends z.ZodType = z.ZodType> {
  readonly env: string;
  readonly schema: S;
  readonly doc: string;
  /** Never logged, never echoed in docs defaults. */
  readonly secret?: boolean;
}

const def = <S extends z.ZodType>(env: string, schema: S, doc: string, secret = false): FieldDef<S> => ({
  env,
  schema,
  doc,
  secret,
});

const bool = (fallback: boolean) =>
  z
    .union([z.boolean(), z.string()])
    .transform((v) => (typeof v === "boolean" ? v : ["1", "true", "yes", "on"].includes(v.trim().toLowerCase())))
    .default(fallback);
const int = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const MiB = 1024 * 1024;

function isJsonObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v);
  } catch {
    return false;
  }
}

export const fields = {
  env: def(
    "IBIS_ENV",
    z.enum(["development", "test", "production"]).default("development"),
    "Run mode. `production` refuses to start without the required secrets (spec §5.7).",
  ),
  host: def("HOST", z.string().default("0.0.0.0"), "Address REST and /ws listen on."),
  port: def("PORT", int(9800, 0, 65535), "TCP port for REST and /ws (0 picks a free port)."),
  databaseUrl: def(
    "DATABASE_URL",
    z.string().default(""),
    "Unset: embedded PGlite under DATA_DIR. `memory://`: in-memory PGlite. `postgres://…`: PostgreSQL.",
    true,
  ),
  dataDir: def("DATA_DIR", z.string().default("./data"), "Directory of the embedded PGlite database."),
  dbPoolSize: def("IBIS_DB_POOL", int(10, 1, 200), "PostgreSQL connections per process."),
  redisUrl: def(
    "REDIS_URL",
    z.string().default(""),
    "Unset: in-process bus (one node). Set: Redis Streams carry cross-node delivery and marks.",
    true,
  ),
  nodeId: def(
    "IBIS_NODE_ID",
    z.coerce.number().int().min(0).max(1023).optional(),
    "Node id (0–1023) inside generated ids. Unset: leased at start from Redis or the database.",
  ),
  workers: def(
    "IBIS_WORKERS",
    int(1, 1, 64),
    "Processes sharing the port (reusePort); more than 1 needs REDIS_URL and PostgreSQL. `bun run start --workers N` sets it too.",
  ),
  redisPrefix: def("IBIS_REDIS_PREFIX", z.string().default("ibis:"), "Prefix of every Redis key and stream (docs/cluster.md)."),
  presenceTtlMs: def(
    "IBIS_PRESENCE_TTL_MS",
    int(30_000, 3_000),
    "Lifetime of a node's presence entries without a heartbeat (beats every third of it); a dead node stops being routed to after this.",
  ),
  busMaxLen: def(
    "IBIS_BUS_MAXLEN",
    int(20_000, 100),
    "Cap on a node's inbox stream (XADD MAXLEN ~): the backlog kept for a node that is down. A live node trims what it has consumed.",
  ),
  busBuffer: def("IBIS_BUS_BUFFER", int(100_000, 100), "Outgoing bus entries kept in memory while Redis is down; the oldest are dropped beyond it."),
  shutdownGraceMs: def(
    "IBIS_SHUTDOWN_GRACE_MS",
    int(0, 0, 120_000),
    "On SIGTERM, time /readyz answers 503 (and new /ws handshakes are refused) before sockets are closed; give your load balancer its probe interval.",
  ),
  logLevel: def("IBIS_LOG_LEVEL", z.enum(["debug", "info", "warn", "error", "silent"]).default("info"), "Log threshold."),

  tokenSecret: def(
    "IBIS_TOKEN_SECRET",
    z.string().default(""),
    "HS256 signing key for access/refresh tokens and the admin cookie. Required in production; in development a key is generated once and kept in the database.",
    true,
  ),
  fieldKey: def(
    "IBIS_FIELD_KEY",
    z.string().default(""),
    "Database field-encryption key (AES-256-GCM for secrets stored in rows). Required in production; generated once and kept in the database otherwise.",
    true,
  ),
  masterCode: def(
    "IBIS_MASTER_CODE",
    z.string().default(""),
    "Master verification code for development logins; must be empty in production.",
    true,
  ),
  apiSignature: def(
    "IBIS_API_SIGNATURE",
    bool(false),
    "API request signature verification switch; must be on in production.",
  ),
  passwordMemoryKib: def(
    "IBIS_PASSWORD_MEMORY_KIB",
    int(65_536, 1024, 4_194_304),
    "Argon2id memory cost (KiB) for new password hashes; production refuses less than 19456 (OWASP minimum).",
  ),
  accessTokenTtl: def("IBIS_ACCESS_TOKEN_TTL", int(86_400, 60), "Access-token lifetime in seconds."),
  refreshTokenTtl: def("IBIS_REFRESH_TOKEN_TTL", int(30 * 86_400, 60), "Refresh-token lifetime in seconds."),
  tokenClockSkew: def("IBIS_TOKEN_CLOCK_SKEW", int(300, 0), "Tolerated clock skew when validating tokens, seconds (spec: 5 min)."),
  loginRsa: def(
    "IBIS_LOGIN_RSA",
    bool(false),
    "Publish an RSA key in init and expect the login password wrapped with RSA-OAEP-SHA256.",
  ),
  loginRsaPrivateKey: def(
    "IBIS_LOGIN_RSA_PRIVATE_KEY",
    z.string().default(""),
    "PKCS#8 PEM private key for the login wrapping. Empty: generated once and kept in the database.",
    true,
  ),
  initSecret: def(
    "IBIS_INIT_SECRET",
    z.string().default("ibis-init-v1"),
    "Fixed secret the init AES-256-CBC key is derived from (docs/auth.md); shared with the apps.",
    true,
  ),
  publicWsUrl: def("IBIS_PUBLIC_WS_URL", z.string().default(""), "ws_url announced by init. Empty: derived from the request host."),
  publicUploadUrl: def("IBIS_PUBLIC_UPLOAD_URL", z.string().default(""), "upload_url announced by init."),
  features: def(
    "IBIS_FEATURES",
    z
      .string()
      .default("")
      .refine((v) => v.trim() === "" || isJsonObject(v), "must be a JSON object"),
    'Feature configuration block as JSON, e.g. {"e2ee":{"enabled":false}}. Unset: every feature on (spec §2.5).',
  ),
  adminAccount: def("IBIS_ADMIN_ACCOUNT", z.string().default("admin"), "Account of the first admin (role superadmin)."),
  adminPassword: def(
    "IBIS_ADMIN_PASSWORD",
    z.string().default(""),
    "Password of the first admin. Empty: no admin is created.",
    true,
  ),
  adminSessionTtl: def("IBIS_ADMIN_SESSION_TTL", int(43_200, 60), "Admin console session (signed cookie) lifetime in seconds."),
  logoutGraceDays: def("IBIS_LOGOUT_GRACE_DAYS", int(15, 0, 365), "Days between an account-logout request and the deletion."),

  throttleOff: def(
    "IBIS_THROTTLE_OFF",
    bool(false),
    "Lifts every throttle (message, handshake, login). For benchmarks only.",
  ),
  msgRate: def("IBIS_MSG_RATE", int(50, 1), "Per-user business messages per second (token bucket refill)."),
  msgBurst: def("IBIS_MSG_BURST", int(200, 1), "Per-user business message burst (token bucket size)."),
  handshakePerDevice: def("IBIS_HANDSHAKE_PER_DEVICE", int(20, 1), "WebSocket handshakes per device id per 10 s."),
  handshakePerIp: def("IBIS_HANDSHAKE_PER_IP", int(600, 1), "WebSocket handshakes per IP per minute."),
  loginPerIp: def("IBIS_LOGIN_PER_IP", int(60, 1), "Login/signup/refresh calls per IP per minute."),
  accountWritesPerMinute: def(
    "IBIS_ACCOUNT_WRITES_PER_MINUTE",
    int(20, 1),
    "Per user (or admin) per minute: profile updates, device rename and sign-out, admin suspend/unsuspend and app_upgrade broadcasts.",
  ),
  searchPerMinute: def("IBIS_SEARCH_PER_MINUTE", int(30, 1), "User searches (finding people) per user per minute."),

  wsMaxPayload: def(
    "IBIS_WS_MAX_PAYLOAD",
    int(16 * MiB + 64 * 1024, 16 * MiB + 9),
    "WebSocket message limit in bytes; above it Bun closes with 1009. Must exceed 16 MiB + 9.",
  ),
  wsIdleTimeout: def("IBIS_WS_IDLE_TIMEOUT", int(120, 8, 960), "Seconds of silence before a socket is closed; Bun pings at this interval."),
  heartbeatInterval: def("IBIS_HEARTBEAT_INTERVAL_MS", int(120_000, 100), "svc.v2 frame-level ping interval, ms."),
  // One largest frame (16 MiB) plus 1 MiB: a client taking a 16 MiB message must not be cut for the notice sent beside it.
  wsBackpressureLimit: def(
    "IBIS_WS_BACKPRESSURE_LIMIT",
    int(17 * MiB, 1024),
    "Bytes queued to one slow socket before it is disconnected (default: one 16 MiB frame plus 1 MiB).",
  ),
  tokenRefreshWindow: def("IBIS_TOKEN_REFRESH_WINDOW_MS", int(8_000, 100), "Time a client has after please_refresh_token (spec: 8 s)."),

  allowStrangers: def("IBIS_ALLOW_STRANGERS", bool(false), "Allow C2C between users who are not friends."),
  groupSelfJoin: def("IBIS_GROUP_SELF_JOIN", bool(true), "Let a user join a group by its id without an invitation."),
  socialCacheTtlMs: def(
    "IBIS_SOCIAL_CACHE_TTL_MS",
    int(30_000, 0),
    "How long the delivery-path social cache (friendship, denylist, members) trusts an entry; bounds staleness across nodes. 0 disables the cache.",
  ),
  socialCacheSize: def("IBIS_SOCIAL_CACHE_SIZE", int(100_000, 1), "Entries per social cache (oldest evicted first)."),
  assistants: def(
    "IBIS_ASSISTANTS",
    z.string().default(""),
    'AI assistants seeded at start, JSON array: [{"account":"helper","nickname":"Helper","avatar":"","description":""}] (account_type 1).',
  ),
  messageRetentionDays: def("IBIS_MESSAGE_RETENTION_DAYS", int(180, 1), "Stored messages older than this are pruned."),
  benchGcSignal: def(
    "IBIS_BENCH_GC_SIGNAL",
    bool(false),
    "Benchmarks only: SIGUSR1 runs a full garbage collection (Bun.gc(true)), so bench/ can read RSS per connection after GC. Off by default; ignored in production.",
  ),
  bots: def("IBIS_BOTS", z.string().default("1000"), "Comma-separated bot ids that C2S may address; the first is the built-in echo bot."),
  deliveryBatchMax: def("IBIS_DELIVERY_BATCH_MAX", int(512, 1, 4096), "Most messages (or marks) written in one group commit."),
  deliveryRetryTickMs: def("IBIS_DELIVERY_RETRY_TICK_MS", int(100, 10, 1000), "Granularity of the delivery retry timer wheel, ms."),
  deliveryPruneIntervalMs: def(
    "IBIS_DELIVERY_PRUNE_INTERVAL_MS",
    int(3_600_000, 1000),
    "How often messages older than IBIS_MESSAGE_RETENTION_DAYS are pruned, ms.",
  ),
} as const;

export type Fields = typeof fields;
export type Config = { [K in keyof Fields]: z.output<Fields[K]["schema"]> };
