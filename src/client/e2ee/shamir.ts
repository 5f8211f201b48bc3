/**
 * Shamir secret sharing over GF(2^8) (polynomial 0x11b), byte by byte: the
 * shares a user hands to social-recovery proxies (spec §2.7, docs/e2ee.md).
 * A share is x (1 byte, 1..255) || y (one byte per secret byte); any
 * `threshold` distinct shares give the secret back, fewer give nothing.
 */
const EXP = new Uint8Array(510);
const LOG = new Uint8Array(256);
{
  let x = 1;
  for (let i = 0; i < 255; i++) {
    EXP[i] = x;
    LOG[x] = i;
    x ^= (x << 1) ^ (x & 0x80 ? 0x11b : 0); // × 3
    x &= 0xff;
  }
  for (let i = 255; i < 510; i++) EXP[i] = EXP[i - 255]!;
}
const mul = (a: number, b: number) => (a === 0 || b === 0 ? 0 : EXP[LOG[a]! + LOG[b]!]!);
const div = (a: number, b: number) => (a === 0 ? 0 : EXP[LOG[a]! + 255 - LOG[b]!]!);

export function splitSecret(secret: Uint8Array, total: number, threshold: number): Uint8Array[] {
  if (!(threshold >= 2 && threshold <= total && total <= 255)) throw new RangeError("need 2 ≤ threshold ≤ total ≤ 255");
  const shares = Array.from({ length: total }, (_, i) => {
    const s = new Uint8Array(1 + secret.length);
    s[0] = i + 1;
    return s;
  });
  const coeffs = new Uint8Array(threshold);
  for (let b = 0; b < secret.length; b++) {
    crypto.getRandomValues(coeffs);
    coeffs[0] = secret[b]!;
    for (const s of shares) {
      let y = 0;
      for (let k = threshold - 1; k >= 0; k--) y = mul(y, s[0]!) ^ coeffs[k]!; // Horner
      s[1 + b] = y;
    }
  }
  coeffs.fill(0);
  return shares;
}

/** Lagrange interpolation at 0; the caller supplies at least `threshold` distinct shares. */
export function combineShares(shares: readonly Uint8Array[]): Uint8Array {
  if (shares.length < 2) throw new RangeError("need at least two shares");
  const len = shares[0]!.length;
  const xs = shares.map((s) => s[0]!);
  if (shares.some((s) => s.length !== len) || new Set(xs).size !== xs.length || xs.includes(0)) throw new RangeError("shares are inconsistent");
  const out = new Uint8Array(len - 1);
  for (let b = 1; b < len; b++) {
    let acc = 0;
    for (let i = 0; i < shares.length; i++) {
      let w = 1;
      for (let j = 0; j < shares.length; j++) if (j !== i) w = mul(w, div(xs[j]!, xs[j]! ^ xs[i]!));
      acc ^= mul(shares[i]![b]!, w);
    }
    out[b - 1] = acc;
  }
  return out;
}
