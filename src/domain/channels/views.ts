/**
 * View dedupe without a row per view: a node remembers (user, message) pairs
 * it counted in the last `windowMs`, at most `max` of them (oldest dropped
 * first). A repeat inside the window is answered but not counted; after the
 * window, on another node, or once evicted, a repeat counts again. So
 * view_count counts views, not exact unique viewers (docs/channels.md).
 */
export class ViewDedupe {
  readonly #seen = new Map<string, number>();

  constructor(
    private readonly now: () => number,
    private readonly windowMs = 3_600_000,
    private readonly max = 200_000,
  ) {}

  /** True when this view is to be counted. */
  first(userId: bigint, messageId: bigint): boolean {
    const key = `${userId}:${messageId}`;
    const t = this.now();
    const at = this.#seen.get(key);
    if (at !== undefined && t - at < this.windowMs) return false;
    this.#seen.delete(key);
    this.#seen.set(key, t);
    if (this.#seen.size > this.max) this.#seen.delete(this.#seen.keys().next().value!);
    return true;
  }
}
