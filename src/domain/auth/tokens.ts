import { errors, jwtVerify, SignJWT } from "jose";
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
  /** Imported once: jose would import a raw key again on every verify (every handshake). */
  readonly #verifyKey: Promise<CryptoKey | Uint8Array>;

  constructor(private readonly settings: TokenSettings, private readonly now: () => number = Date.now) {
    this.#key = new TextEncoder().encode(settings.secret);
    this.#verifyKey = crypto.subtle
      .importKey("raw", this.#key, { name: "HMAC", hash: "SHA-256" }, false, ["verify"])
      .catch(() => this.#key);
  }

  async issue(userId: bigint, deviceId: string, kind: TokenKind): Promise<string> {
    const iat = Math.floor(this.now() / 1000);
    const ttl = kind === "access" ? this.settings.accessTtlSec : this.settings.refreshTtlSec;
    return new SignJWT({ did: deviceId, typ: kind })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(userId.toString())
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttl)
      .setJti(crypto.randomUUID())
      .sign(this.#key);
  }

  async pair(userId: bigint, deviceId: string): Promise<{ token: string; refreshtoken: string }> {
    const [token, refreshtoken] = await Promise.all([
      this.issue(userId, deviceId, "access"),
      this.issue(userId, deviceId, "refresh"),
    ]);
    return { token, refreshtoken };
  }

  async verify(token: string, kind: TokenKind): Promise<Result<TokenClaims>> {
    try {
      const { payload } = await jwtVerify(token, await this.#verifyKey, {
        algorithms: ["HS256"],
        clockTolerance: this.settings.clockSkewSec,
        currentDate: new Date(this.now()),
      });
      const userId = toId(payload.sub);
      // jose checks exp and nbf against the tolerance but not an iat in the future: an
      // issuer clock more than the skew ahead is refused here (spec §5.1: 5 minutes).
      const fromFuture = typeof payload.iat !== "number" || payload.iat - this.settings.clockSkewSec > this.now() / 1000;
      if (userId === undefined || payload.typ !== kind || typeof payload.exp !== "number" || fromFuture) {
        return fail("unauthorized", kind === "access" ? "invalid access token" : "invalid refresh token");
      }
      return ok({ userId, deviceId: typeof payload.did === "string" ? payload.did : "", kind, expiresAt: payload.exp * 1000 });
    } catch (e) {
      if (e instanceof errors.JWTExpired) return fail("unauthorized", "token expired");
      return fail("unauthorized", "invalid token");
    }
  }
}
