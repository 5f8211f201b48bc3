import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { SignJWT } from "jose";
import { TokenService, VERIFIED_MAX } from "../../../src/domain/auth/tokens.ts";

const SECRET = "a-test-secret-of-some-length-0123456789";
const KEY = new TextEncoder().encode(SECRET);
const T = Date.UTC(2026, 5, 1, 12);
const S = Math.floor(T / 1000);
const UID = 612345678901234567n;

const service = (now = T) => new TokenService({ secret: SECRET, accessTtlSec: 3600, refreshTtlSec: 86_400, clockSkewSec: 300 }, () => now);

/** A token signed with `key`, header and claims as given. */
const sign = (claims: Record<string, unknown>, header: Record<string, unknown> = { alg: "HS256", typ: "JWT" }, key = KEY) =>
  new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key);

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
/** Signed with our key by hand (jose refuses to sign some of these). */
const handSigned = (header: unknown, claims: unknown) => {
  const text = `${b64(header)}.${b64(claims)}`;
  return `${text}.${createHmac("sha256", KEY).update(text).digest("base64url")}`;
};

describe("TokenService.verify (HS256 without jose on the verify path)", () => {
  test("its own tokens round-trip, device claim included", async () => {
    const t = service();
    const claims = await t.verify(await t.issue(UID, "phone-1", "access", 3, "j-1"), "access");
    expect(claims).toEqual({ ok: true, value: { userId: UID, deviceId: "phone-1", kind: "access", expiresAt: (S + 3600) * 1000, gen: 3, jti: "j-1" } });
    expect((await t.verify(await t.issue(UID, "", "refresh"), "refresh")).ok).toBe(true);
  });

  test("the other kind is refused", async () => {
    const t = service();
    expect(await t.verify(await t.issue(UID, "", "refresh"), "access")).toMatchObject({ ok: false, error: { msg: "invalid access token" } });
    expect(await t.verify(await t.issue(UID, "", "access"), "refresh")).toMatchObject({ ok: false, error: { msg: "invalid refresh token" } });
  });

  test("expiry and not-before honour the clock skew (300 s)", async () => {
    const base = { sub: UID.toString(), typ: "access", iat: S - 4000 };
    const t = service();
    expect((await t.verify(await sign({ ...base, exp: S - 299 }), "access")).ok).toBe(true);
    expect(await t.verify(await sign({ ...base, exp: S - 300 }), "access")).toMatchObject({ ok: false, error: { msg: "token expired" } });
    expect((await t.verify(await sign({ ...base, exp: S + 60, nbf: S + 300 }), "access")).ok).toBe(true);
    expect(await t.verify(await sign({ ...base, exp: S + 60, nbf: S + 301 }), "access")).toMatchObject({ ok: false, error: { msg: "invalid token" } });
    // Issued more than the skew in the future.
    expect(await t.verify(await sign({ sub: UID.toString(), typ: "access", iat: S + 301, exp: S + 4000 }), "access")).toMatchObject({
      ok: false,
      error: { msg: "invalid access token" },
    });
  });

  test("anything not signed by our key with HS256, or malformed, is an invalid token", async () => {
    const t = service();
    const good = await t.issue(UID, "d", "access");
    const [h, p, s] = good.split(".") as [string, string, string];
    const claims = { sub: UID.toString(), typ: "access", iat: S, exp: S + 60 };
    const bad = [
      await sign(claims, { alg: "HS256" }, new TextEncoder().encode("another-secret")),
      await sign(claims, { alg: "HS512" }),
      handSigned({ alg: "HS256", crit: ["x"], x: 1 }, claims),
      handSigned({ alg: "HS256", b64: false, crit: ["b64"] }, claims),
      `${b64({ alg: "none" })}.${b64(claims)}.`,
      `${h}.${b64({ ...claims, sub: "1" })}.${s}`, // payload swapped under the old signature
      `${h}.${p}.${s.slice(0, -2)}`,
      `${h}.${p}.${s}.`,
      `${h}.${p}`,
      `${h}..${s}`,
      `${h}.${p}.${s}=`,
      await sign({ ...claims, exp: "soon" }),
      "garbage",
      "",
    ];
    // Each twice, between good ones: the accepted header is remembered, a refused one never is.
    for (const token of bad) {
      expect((await t.verify(good, "access")).ok).toBe(true);
      for (let i = 0; i < 2; i++) expect(await t.verify(token, "access")).toMatchObject({ ok: false, error: { msg: "invalid token" } });
    }
    // Signed with our key, but the payload is not a JSON object.
    expect(await t.verify(handSigned({ alg: "HS256" }, [1, 2]), "access")).toMatchObject({ ok: false, error: { msg: "invalid token" } });
    // The hand signer is right: the same claims under a plain header pass.
    expect((await t.verify(handSigned({ alg: "HS256" }, claims), "access")).ok).toBe(true);
  });
});

describe("TokenService: verified tokens remembered", () => {
  test("a token seen again skips the signature, not its times or kind; a refused one is never remembered", async () => {
    let now = T;
    const t = new TokenService({ secret: SECRET, accessTtlSec: 3600, refreshTtlSec: 86_400, clockSkewSec: 300 }, () => now);
    const token = await t.issue(UID, "phone-1", "access", 2, "j-2");
    const first = t.verifySync(token, "access");
    expect(first.ok).toBe(true);
    expect(t.remembered).toBe(1);
    expect(t.verifySync(token, "access")).toEqual(first);
    expect(t.verifySync(token, "refresh")).toMatchObject({ ok: false, error: { msg: "invalid refresh token" } });
    now = T + (3600 + 300) * 1000; // past expiry and the skew: refused although remembered
    expect(t.verifySync(token, "access")).toMatchObject({ ok: false, error: { msg: "token expired" } });
    expect(t.remembered).toBe(1);
    now = T;
    const [h, p, s] = token.split(".") as [string, string, string];
    const forged = `${h}.${b64({ sub: "1", typ: "access", iat: S, exp: S + 60 })}.${s}`;
    for (let i = 0; i < 2; i++) expect(t.verifySync(forged, "access")).toMatchObject({ ok: false, error: { msg: "invalid token" } });
    expect(t.verifySync(`${h}.${p}.${s.slice(0, -1)}A`, "access").ok).toBe(false);
    expect(t.remembered).toBe(1);
    // Another service (another key) does not share the memory.
    const other = new TokenService({ secret: `${SECRET}-other`, accessTtlSec: 3600, refreshTtlSec: 86_400, clockSkewSec: 300 }, () => now);
    expect(other.verifySync(token, "access")).toMatchObject({ ok: false, error: { msg: "invalid token" } });
  });

  test("bounded: two generations of VERIFIED_MAX, the older dropped whole; an older entry is still answered", async () => {
    const t = service();
    const tokens = await Promise.all(Array.from({ length: VERIFIED_MAX + 10 }, (_, i) => t.issue(UID + BigInt(i), `d${i}`, "access")));
    for (const tok of tokens) expect(t.verifySync(tok, "access").ok).toBe(true);
    expect(t.remembered).toBe(VERIFIED_MAX + 10);
    for (const tok of tokens) expect(t.verifySync(tok, "access").ok).toBe(true); // all found, none added
    expect(t.remembered).toBe(VERIFIED_MAX + 10);
    const more = await Promise.all(Array.from({ length: VERIFIED_MAX }, (_, i) => t.issue(UID - BigInt(i + 1), `e${i}`, "access")));
    for (const tok of more) expect(t.verifySync(tok, "access").ok).toBe(true);
    expect(t.remembered).toBeLessThanOrEqual(2 * VERIFIED_MAX);
    // The first ones, dropped, are verified again from their signature.
    expect(t.verifySync(tokens[0]!, "access")).toMatchObject({ ok: true, value: { userId: UID, deviceId: "d0" } });
  });
});
