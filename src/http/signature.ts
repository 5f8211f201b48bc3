import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { parseApiKeys } from "../config/fields.ts";
import { NonceMemory } from "../domain/auth/nonces.ts";
import { NONCE_PATTERN, SignatureHeader, stringToSign } from "../protocol/signature.ts";
import type { Services } from "../services.ts";
import { json, preBusinessError } from "./envelope.ts";

/** Why a request was refused; the `title` of the top-level 401 (docs/operations.md). */
export type SignatureRefusal = "signature_missing" | "signature_invalid" | "signature_expired" | "signature_replayed";

const refuse = (c: Context, title: SignatureRefusal, content: string) => json(c, preBusinessError(401, title, content), 401);

/**
 * IBIS_API_SIGNATURE: every /api/v1/* request carries an HMAC-SHA256 signature
 * by a known app key over method, path and query, timestamp, nonce and body
 * hash; the timestamp must be inside the window and the nonce unseen in it
 * (this node's memory, then Redis across nodes when REDIS_URL is set).
 * Off: a pass-through that reads nothing.
 */
export function apiSignature(services: Services): MiddlewareHandler {
  const { config, now, log, redis } = services;
  const keys = parseApiKeys(config.apiKeys) ?? new Map<string, string>();
  const windowMs = config.apiSignatureWindow * 1000;
  const local = new NonceMemory(config.apiNonceCap, windowMs, now);
  let redisWarned = 0;

  /** Claims `key` across nodes; Redis unreachable → this node's memory alone decides (logged once a minute). */
  async function claimShared(key: string, ttlMs: number): Promise<boolean> {
    if (!redis) return true;
    try {
      return (await redis.set(`${config.redisPrefix}nonce:${key}`, "1", "PX", ttlMs, "NX")) === "OK";
    } catch (err) {
      if (now() - redisWarned > 60_000) {
        redisWarned = now();
        log.warn("signature nonces: Redis unavailable, replay check is per node", { err });
      }
      return true;
    }
  }

  return async (c, next) => {
    if (!config.apiSignature) return next();
    const app = c.req.header(SignatureHeader.app);
    const ts = c.req.header(SignatureHeader.timestamp);
    const nonce = c.req.header(SignatureHeader.nonce);
    const signature = c.req.header(SignatureHeader.signature);
    if (!app || !ts || !nonce || !signature) {
      return refuse(c, "signature_missing", "X-Ibis-App, X-Ibis-Timestamp, X-Ibis-Nonce and X-Ibis-Signature are required");
    }
    const key = keys.get(app);
    const sent = Number(ts);
    if (!key || !/^\d{1,16}$/.test(ts) || !NONCE_PATTERN.test(nonce) || !/^[0-9a-f]{64}$/.test(signature)) {
      return refuse(c, "signature_invalid", "unknown app or malformed signature headers");
    }
    const t = now();
    if (Math.abs(t - sent) > windowMs) return refuse(c, "signature_expired", "timestamp outside the accepted window");

    const url = new URL(c.req.url);
    const body = new Uint8Array(await c.req.arrayBuffer()); // Hono caches it for the route's own parsing
    const expected = createHmac("sha256", key)
      .update(
        stringToSign({
          app,
          method: c.req.method,
          target: url.pathname + url.search,
          timestamp: ts,
          nonce,
          bodySha256: createHash("sha256").update(body).digest("hex"),
        }),
      )
      .digest();
    if (!timingSafeEqual(expected, Buffer.from(signature, "hex"))) return refuse(c, "signature_invalid", "signature does not match");

    // Remembered until the timestamp itself leaves the window: a replay after that fails the time check.
    const expiresAt = sent + windowMs;
    const claim = local.claim(`${app}:${nonce}`, expiresAt);
    if (claim === "full") return json(c, preBusinessError(429, "rate_limited", "too many signed requests, retry shortly"), 429);
    if (claim === "replayed" || !(await claimShared(`${app}:${nonce}`, Math.max(1, expiresAt - t)))) {
      return refuse(c, "signature_replayed", "nonce already used");
    }
    await next();
  };
}
