import { createHmac, timingSafeEqual } from "node:crypto";
import { SignJWT } from "jose";
import { fail, ok, type Result } from "../errors.ts";
import { toId } from "../../ids/tsid.ts";

export type TokenKind = "access" | "refresh";

export interface TokenClaims {
  readonly userId: bigint;
  /** Device the token was issued to; "" when the login named none. */
  readonly deviceId: string;
  readonly kind: TokenKind;
  /** Expiry, ms UTC. */
  readonly expiresAt: number;
  /** The device session's generation at issue (docs/auth.md "Revocation"); 0 when the token carries none. */
  readonly gen: number;
  /** The token's id (refresh rotation compares it with the session's current one). */
  readonly jti: string;
}

export interface TokenPair {
  readonly token: string;
  readonly refreshtoken: string;
  /** The refresh token's `jti`: the session keeps it as the one refresh token still usable. */
  readonly refreshJti: string;
}

export interface TokenSettings {
  readonly secret: string;
  readonly accessTtlSec: number;
  readonly refreshTtlSec: number;
  readonly clockSkewSec: number;
}

/**
 * HS256 access and refresh tokens (spec §5.1). The user id travels as a
 * string claim (`sub`) so it never passes through a JSON number; `typ` keeps
 * the two kinds apart, so a refresh token is refused where an access token is
 * expected and the other way round.
 */
export class TokenService {
  readonly #key: Uint8Array<ArrayBuffer>;

  constructor(private readonly settings: TokenSettings, private readonly now: () => number = Date.now) {
    this.#key = new TextEncoder().encode(settings.secret);
  }

  async issue(userId: bigint, deviceId: string, kind: TokenKind, gen = 0, jti: string = crypto.randomUUID()): Promise<string> {
    const iat = Math.floor(this.now() / 1000);
    const ttl = kind === "access" ? this.settings.accessTtlSec : this.settings.refreshTtlSec;
    return new SignJWT({ did: deviceId, typ: kind, gen })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(userId.toString())
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttl)
      .setJti(jti)
      .sign(this.#key);
  }

  /** An access and a refresh token of the device session's generation `gen`. */
  async pair(userId: bigint, deviceId: string, gen = 0, refreshJti: string = crypto.randomUUID()): Promise<TokenPair> {
    const [token, refreshtoken] = await Promise.all([
      this.issue(userId, deviceId, "access", gen),
      this.issue(userId, deviceId, "refresh", gen, refreshJti),
    ]);
    return { token, refreshtoken, refreshJti };
  }

  /**
   * Verifies an HS256 token of `kind`. Done here rather than with jose's
   * jwtVerify (every handshake and REST call verifies; jose's WebCrypto path is
   * ~10× slower): the same checks as jwtVerify with `algorithms: ["HS256"]`
   * and the clock tolerance (exp, nbf, claim types, no `crit`), then ours.
   */
  async verify(token: string, kind: TokenKind): Promise<Result<TokenClaims>> {
    return this.verifySync(token, kind);
  }

  verifySync(token: string, kind: TokenKind): Result<TokenClaims> {
    const payload = this.#signedPayload(token);
    if (payload === undefined) return fail("unauthorized", "invalid token");
    const now = Math.floor(this.now() / 1000);
    const skew = this.settings.clockSkewSec;
    const { exp, nbf, iat } = payload;
    if ((exp !== undefined && typeof exp !== "number") || (nbf !== undefined && typeof nbf !== "number") || (iat !== undefined && typeof iat !== "number")) {
      return fail("unauthorized", "invalid token");
    }
    if (typeof exp === "number" && exp <= now - skew) return fail("unauthorized", "token expired");
    if (typeof nbf === "number" && nbf > now + skew) return fail("unauthorized", "invalid token");
    const userId = toId(payload.sub);
    // An issuer clock more than the skew ahead is refused (spec §5.1: 5 minutes): iat in the future.
    const fromFuture = typeof iat !== "number" || iat - skew > this.now() / 1000;
    if (userId === undefined || payload.typ !== kind || typeof exp !== "number" || fromFuture) {
      return fail("unauthorized", kind === "access" ? "invalid access token" : "invalid refresh token");
    }
    const gen = payload.gen === undefined ? 0 : payload.gen;
    if (typeof gen !== "number" || !Number.isSafeInteger(gen) || gen < 0) return fail("unauthorized", "invalid token");
    return ok({
      userId,
      deviceId: typeof payload.did === "string" ? payload.did : "",
      kind,
      expiresAt: exp * 1000,
      gen,
      jti: typeof payload.jti === "string" ? payload.jti : "",
    });
  }

  /** The last header segment that passed the checks below (the same text passes them again). */
  #acceptedHeader: string | undefined;

  /**
   * Tokens whose signature checked out, with their decoded claims, in two generations of at most `VERIFIED_MAX`
   * (the older dropped whole when the younger fills): a device that reconnects presents the same token again, and
   * its HMAC, decoding and parse cost most of the check (~3.7 µs a token against ~0.5 remembered). Only the signature's
   * verdict is remembered: the claims' times and kind are checked on every use, the session on every handshake.
   */
  #verified = new Map<string, Readonly<Record<string, unknown>>>();
  #verifiedOlder = new Map<string, Readonly<Record<string, unknown>>>();

  /** Tokens remembered as signed by our key (tests). */
  get remembered(): number {
    return this.#verified.size + this.#verifiedOlder.size;
  }

  /** The claims of a well-formed HS256 JWS signed with our key; undefined for anything else. */
  #signedPayload(token: string): Readonly<Record<string, unknown>> | undefined {
    // Not moved up when found in the older generation: a storm of more devices than one generation would then
    // rotate the generations while it is read, dropping entries it is about to use.
    const known = this.#verified.get(token) ?? this.#verifiedOlder.get(token);
    if (known !== undefined) return known;
    const payload = this.#checkSignature(token);
    if (payload === undefined) return undefined; // a refused token is never remembered
    if (this.#verified.size >= VERIFIED_MAX) {
      this.#verifiedOlder = this.#verified;
      this.#verified = new Map();
    }
    this.#verified.set(token, payload);
    return payload;
  }

  #checkSignature(token: string): Readonly<Record<string, unknown>> | undefined {
    const dot1 = token.indexOf(".");
    const dot2 = token.indexOf(".", dot1 + 1);
    if (dot1 <= 0 || dot2 <= dot1 + 1 || token.indexOf(".", dot2 + 1) !== -1 || dot2 === token.length - 1) return undefined;
    const headerText = token.slice(0, dot1);
    if (headerText !== this.#acceptedHeader) {
      const header = jsonObject(headerText);
      if (header?.alg !== "HS256" || header.crit !== undefined || header.b64 !== undefined) return undefined;
      // Every token we issue carries the same header: its text decoded once, not per handshake.
      this.#acceptedHeader = headerText;
    }
    const sig = base64url(token.slice(dot2 + 1));
    if (sig?.length !== 32) return undefined;
    // node:crypto, not Bun.CryptoHasher: the latter can throw on an OpenSSL error left queued by another operation.
    const mac = createHmac("sha256", this.#key).update(token.slice(0, dot2)).digest();
    if (!timingSafeEqual(mac, sig)) return undefined;
    const payload = jsonObject(token.slice(dot1 + 1, dot2));
    return payload && Object.freeze(payload); // shared by every later use of the token
  }
}

/**
 * Verified tokens per generation (`#verified`): two generations hold a reconnect storm of 8,192 devices, ~5 MB at
 * most (a token and its claims ~0.5 KB).
 */
export const VERIFIED_MAX = 4096;

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Strict base64url (no padding, no other alphabet), as jose decodes; undefined when malformed. */
function base64url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    return Buffer.from(text, "base64url");
  } catch {
    return undefined;
  }
}

/** A base64url segment holding a JSON object; undefined for anything else. */
function jsonObject(segment: string): Record<string, unknown> | undefined {
  const bytes = base64url(segment);
  if (!bytes) return undefined;
  try {
    const v: unknown = JSON.parse(UTF8.decode(bytes));
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
