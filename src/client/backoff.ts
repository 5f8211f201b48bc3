/**
 * Client reconnect back-off (spec §8): immediate, 1 s, 2 s, 5 s, 10 s, then
 * doubling up to 60 s. Every delay but the immediate one gets ±jitter so a
 * restarted server is not hit by every client in the same millisecond.
 */
export const BACKOFF_STEPS_MS: readonly number[] = [0, 1_000, 2_000, 5_000, 10_000];
export const BACKOFF_MAX_MS = 60_000;
export const BACKOFF_JITTER = 0.2;

/** The delay before reconnect attempt `attempt` (0-based), without jitter. */
export function backoffBase(attempt: number): number {
  const steps = BACKOFF_STEPS_MS.length;
  if (attempt < steps) return BACKOFF_STEPS_MS[Math.max(0, attempt)]!;
  return Math.min(BACKOFF_MAX_MS, BACKOFF_STEPS_MS[steps - 1]! * 2 ** (attempt - steps + 1));
}

/** The delay with jitter: base × [1 − j, 1 + j) for `random()` in [0, 1), never above 60 s. */
export function backoffDelay(attempt: number, random: () => number = Math.random, jitter = BACKOFF_JITTER): number {
  const base = backoffBase(attempt);
  if (base === 0) return 0;
  return Math.min(BACKOFF_MAX_MS, Math.round(base * (1 - jitter + 2 * jitter * random())));
}
