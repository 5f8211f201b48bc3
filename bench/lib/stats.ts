/** Median of a list (mean of the middle two when even); 0 when empty. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export const round = (x: number, digits = 0): number => {
  const k = 10 ** digits;
  return Math.round(x * k) / k;
};

export const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
