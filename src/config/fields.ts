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

/** The init secret the apps ship with; production refuses it (anyone holding an app can read init). */
export const BUILT_IN_INIT_SECRET = "ibis-init-v1";
const API_KEY_MIN = 32;

/** `app:key,app2:key2` → Map; undefined when malformed (config refuses it). */
export function parseApiKeys(text: string): Map<string, string> | undefined {
  const out = new Map<string, string>();
  for (const part of text.split(",")) {
    if (part.trim() === "") continue;
    const at = part.indexOf(":");
    const app = part.slice(0, at).trim();
    const key = part.slice(at + 1).trim();
    if (at <= 0 || !/^[A-Za-z0-9._-]{1,64}$/.test(app) || key.length < API_KEY_MIN || out.has(app)) return undefined;
    out.set(app, key);
  }
  return out;
}

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
    "Unset: embedded PGlite under DATA_DIR. `memory://`: in-memory PGlite. `postgres://…`: PostgreSQL (`postgres://user@/db?host=/var/run/postgresql`: over its Unix-domain socket).",
    true,
  ),
  dataDir: def("DATA_DIR", z.string().default("./data"), "Directory of the embedded PGlite database."),
  allowEmbeddedInProduction: def(
    "IBIS_ALLOW_EMBEDDED_IN_PRODUCTION",
    bool(false),
    "Lets production run on the embedded PGlite database, accepting that it does not fsync (a crash can lose recent writes; docs/operations.md).",
  ),
  tlsCert: def("IBIS_TLS_CERT", z.string().default(""), "PEM certificate chain file: with IBIS_TLS_KEY, REST and /ws answer https and wss directly."),
  tlsKey: def("IBIS_TLS_KEY", z.string().default(""), "PEM private key file for IBIS_TLS_CERT."),
  dbPoolSize: def("IBIS_DB_POOL", int(10, 1, 200), "PostgreSQL connections per process, one of them the message batches' own (docs/storage.md)."),
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
  shutdownTimeoutMs: def(
    "IBIS_SHUTDOWN_TIMEOUT_MS",
    int(30_000, 1_000, 600_000),
    "After the grace period, the longest closing sockets, flushing and closing the store may take; past it the process exits with code 1 and names the step that hung.",
  ),
  metrics: def("IBIS_METRICS", bool(true), "Serve Prometheus metrics at /metrics (docs/operations.md) and sample the event-loop delay."),
  metricsToken: def(
    "IBIS_METRICS_TOKEN",
    z.string().default(""),
    "When set, /metrics requires `Authorization: Bearer <this>`. Empty: open (keep the port internal).",
    true,
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
    "Verify request signatures on /api/v1/* (HMAC-SHA256, docs/operations.md); must be on in production.",
  ),
  apiKeys: def(
    "IBIS_API_KEYS",
    z
      .string()
      .default("")
      .refine((v) => parseApiKeys(v) !== undefined, "must be app_id:key pairs separated by commas (key at least 32 characters)"),
    "Per-app signing keys for IBIS_API_SIGNATURE: `app_id:key,app_id2:key2` (keys of 32+ characters). Required when the signature is on.",
    true,
  ),
  apiSignatureWindow: def(
    "IBIS_API_SIGNATURE_WINDOW",
    int(300, 10, 3600),
    "Seconds a signed request's timestamp may differ from the server clock; its nonce is remembered this long on both sides.",
  ),
  apiNonceCap: def(
    "IBIS_API_NONCE_CAP",
    int(1_000_000, 1000),
    "Nonces one node remembers inside the window; past it signed requests are refused (429) until old ones expire.",
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
    z.string().default(BUILT_IN_INIT_SECRET),
    "Fixed secret the init AES-256-CBC key is derived from (docs/auth.md); shared with the apps. Production refuses the built-in value.",
    true,
  ),
  publicWsUrl: def(
    "IBIS_PUBLIC_WS_URL",
    z.string().default("").refine((v) => v === "" || /^wss?:\/\/[^/\s]+/.test(v), "must be a ws:// or wss:// URL"),
    "ws_url announced by init (never taken from the request's Host header). Required in production; empty elsewhere: ws(s)://localhost:PORT/ws.",
  ),
  publicUploadUrl: def("IBIS_PUBLIC_UPLOAD_URL", z.string().default(""), "upload_url announced by init."),
  s3Endpoint: def("IBIS_S3_ENDPOINT", z.string().default(""), "S3-compatible object store for attachments, e.g. https://s3.eu-west-1.amazonaws.com. Required in production (spec §9.6)."),
  s3Bucket: def("IBIS_S3_BUCKET", z.string().default(""), "Bucket attachments are uploaded to. Required in production."),
  s3AccessKey: def("IBIS_S3_ACCESS_KEY", z.string().default(""), "Object-store access key id. Required in production.", true),
  s3SecretKey: def("IBIS_S3_SECRET_KEY", z.string().default(""), "Object-store secret access key. Required in production.", true),
  s3Region: def("IBIS_S3_REGION", z.string().default("us-east-1"), "Object-store region (part of the SigV4 signature)."),
  attachmentMaxBytes: def("IBIS_ATTACHMENT_MAX_BYTES", int(100 * MiB, 1, 5 * 1024 * MiB), "Largest attachment, bytes (one PUT; S3 allows 5 GiB)."),
  attachmentUploadTtl: def("IBIS_ATTACHMENT_UPLOAD_TTL", int(900, 10, 3600), "Seconds a presigned upload URL stays valid."),
  attachmentDownloadTtl: def("IBIS_ATTACHMENT_DOWNLOAD_TTL", int(86_400, 60, 604_800), "Seconds a presigned download URL stays valid (SigV4: 7 days at most)."),
  attachmentPendingHours: def("IBIS_ATTACHMENT_PENDING_HOURS", int(24, 1), "Uploads not completed within this many hours are deleted (object and record)."),
  attachmentPresignPerMin: def("IBIS_ATTACHMENT_PRESIGN_PER_MIN", int(60, 1), "Presign calls per user per minute."),
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
  msgByteRate: def("IBIS_MSG_BYTE_RATE", int(MiB, 1024), "Per-user business message bytes per second (token bucket refill)."),
  msgByteBurst: def(
    "IBIS_MSG_BYTE_BURST",
    int(32 * MiB, 1024),
    "Per-user business message bytes in a burst (token bucket size; never below IBIS_MSG_MAX_BYTES).",
  ),
  msgMaxBytes: def(
    "IBIS_MSG_MAX_BYTES",
    int(16 * MiB, 1024, 16 * MiB),
    "Largest business message a client may send, in bytes as received (default: the 16 MiB frame limit).",
  ),
  ackRate: def("IBIS_ACK_RATE", int(1000, 1), "Per-user acknowledgements per second (a bucket apart from messages)."),
  ackBurst: def("IBIS_ACK_BURST", int(5000, 1), "Per-user acknowledgement burst."),
  handshakePerDevice: def("IBIS_HANDSHAKE_PER_DEVICE", int(20, 1), "Authenticated WebSocket handshakes per device (user and device id) per 10 s; unauthenticated ones count per IP only."),
  handshakePerIp: def("IBIS_HANDSHAKE_PER_IP", int(600, 1), "WebSocket handshakes per IP per minute."),
  groupOpsPerMin: def("IBIS_GROUP_OPS_PER_MIN", int(60, 1), "Group management calls (create, edit, dissolve, join, leave, role) per user per minute."),
  friendRequestsPerMin: def(
    "IBIS_FRIEND_REQUESTS_PER_MIN",
    int(30, 1),
    "Friend request calls (add, confirm, reject, delete, denylist) per user per minute.",
  ),
  restBodyMax: def("IBIS_REST_BODY_MAX", int(MiB, 1024), "Largest REST request body in bytes (413 above it)."),
  loginPerIp: def("IBIS_LOGIN_PER_IP", int(60, 1), "Login/signup/refresh calls per IP per minute."),
  accountWritesPerMin: def(
    "IBIS_ACCOUNT_WRITES_PER_MIN",
    int(20, 1),
    "Per user (or admin) per minute: profile updates, device rename and sign-out, admin suspend/unsuspend and app_upgrade broadcasts.",
  ),
  searchPerMin: def("IBIS_SEARCH_PER_MIN", int(30, 1), "User searches (finding people) per user per minute."),
  stateWritesPerMin: def(
    "IBIS_STATE_WRITES_PER_MIN",
    int(600, 1),
    "Per user per minute, in each area: small state writes (read sync, offline acknowledgements, conversation pin and delete, mention mark-read, attachment completion, logout request and cancel).",
  ),

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

  e2eeWritesPerMinute: def(
    "IBIS_E2EE_WRITES_PER_MINUTE",
    int(60, 1),
    "Per-user E2EE calls that store or fan out (key registration, trust events, shard creation and decryption, proxy keys) per minute.",
  ),
  e2eeTrustWindowMs: def(
    "IBIS_E2EE_TRUST_WINDOW_MS",
    int(300_000, 1000),
    "A signed trust event's ts must be within this distance of server time (and newer than the device's last accepted event).",
  ),
  e2eeMaxProxies: def("IBIS_E2EE_MAX_PROXIES", int(10, 2, 100), "Most proxies (shards) one social-recovery set may have."),

  allowStrangers: def("IBIS_ALLOW_STRANGERS", bool(false), "Allow C2C between users who are not friends."),
  groupSelfJoin: def(
    "IBIS_GROUP_SELF_JOIN",
    bool(false),
    "Let a user join a group by its id without an invitation; off: a self-join is a request the owner or a manager admits (docs/social.md).",
  ),
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
  channelPaymentProvider: def(
    "IBIS_CHANNEL_PAYMENT_PROVIDER",
    z.enum(["auto", "dev", "none"]).default("auto"),
    "Channel order payments: `dev` accepts every charge (development, tests); `none` refuses `pay`; `auto` is `dev` outside production and `none` in production.",
  ),
  channelWritesPerMin: def(
    "IBIS_CHANNEL_WRITES_PER_MIN",
    int(120, 1),
    "Per-user channel calls that store or fan out work (create, publish, edit, subscribe, admins, invitations, orders) per minute.",
  ),
  channelReadsPerMin: def(
    "IBIS_CHANNEL_READS_PER_MIN",
    int(600, 1),
    "Per-user channel views, reactions, mark-read, search and discover calls per minute.",
  ),
  channelInvitationTtlHours: def("IBIS_CHANNEL_INVITATION_TTL_HOURS", int(168, 1), "Hours a channel invitation stays pending before it is expired."),
  pageMaxBytes: def(
    "IBIS_PAGE_MAX_BYTES",
    int(4 * MiB, 1024),
    "Stored bytes of messages in one /msg/history or /msg/offline page (has_more says the rest follows; a larger message comes alone).",
  ),
  deliveryBatchMax: def("IBIS_DELIVERY_BATCH_MAX", int(512, 1, 4096), "Most messages (or marks) written in one group commit."),
  deliveryWriteDepth: def(
    "IBIS_DELIVERY_WRITE_DEPTH",
    int(2, 1, 8),
    "Message batches in flight to the database at once (a 16 MiB message has a lane of its own beside them); a batch past the first goes out only while those in flight hold fewer than 32 messages (a group message counts as 32), so heavy load writes one large batch while the next grows. 1: never overlap commits.",
  ),
  deliveryQueueMax: def(
    "IBIS_DELIVERY_QUEUE_MAX",
    int(50_000, 1),
    "Messages waiting for the store at most; beyond it (or while the store fails) senders get invalid_message store_unavailable.",
  ),
  deliveryQueueMaxBytes: def("IBIS_DELIVERY_QUEUE_MAX_BYTES", int(256 * MiB, MiB), "Payload bytes of the messages waiting for the store at most."),
  deliveryMarksMax: def(
    "IBIS_DELIVERY_MARKS_MAX",
    int(500_000, 1000),
    "Acknowledgement marks waiting for the store at most; beyond it the oldest are dropped (those messages are delivered again, never lost).",
  ),
  deliveryMarkTickMs: def(
    "IBIS_DELIVERY_MARK_TICK_MS",
    int(25, 0, 1000),
    "Least time between two acknowledgement batches to the database, ms: the acks of one device in one group within it become one cursor row write (confirms are not delayed). A full batch goes at once. 0: back to back.",
  ),
  deliveryRetryTickMs: def("IBIS_DELIVERY_RETRY_TICK_MS", int(100, 10, 1000), "Granularity of the delivery retry timer wheel, ms."),
  deliveryPruneIntervalMs: def(
    "IBIS_DELIVERY_PRUNE_INTERVAL_MS",
    int(3_600_000, 1000),
    "How often messages older than IBIS_MESSAGE_RETENTION_DAYS are pruned, ms.",
  ),
} as const;

export type Fields = typeof fields;
export type Config = { [K in keyof Fields]: z.output<Fields[K]["schema"]> };
