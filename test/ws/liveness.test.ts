import { describe, expect, test } from "bun:test";
import { AccountLiveness, type LivenessSource } from "../../src/domain/auth/liveness.ts";

/** A source whose queries the test completes by hand, recording what each asked. */
class ManualSource implements LivenessSource {
  live = new Set<bigint>();
  readonly asked: bigint[][] = [];
  readonly #open: (() => void)[] = [];
  fail = false;
  liveAmong(userIds: readonly bigint[]): Promise<ReadonlySet<bigint>> {
    this.asked.push([...userIds]);
    return new Promise((resolve, reject) => {
      this.#open.push(() => (this.fail ? reject(new Error("db down")) : resolve(new Set(userIds.filter((u) => this.live.has(u))))));
    });
  }
  /** Answers the oldest query in flight. */
  async answer(): Promise<void> {
    this.#open.shift()!();
    for (let i = 0; i < 5; i++) await Promise.resolve();
  }
}

describe("handshake account check (AccountLiveness)", () => {
  test("handshakes arriving while a query is in flight share the next one", async () => {
    const src = new ManualSource();
    src.live = new Set([1n, 2n, 3n]);
    const l = new AccountLiveness(src, 30_000, () => 0);
    const first = l.isActive(1n);
    const more = [l.isActive(2n), l.isActive(3n), l.isActive(4n), l.isActive(2n)];
    expect(src.asked).toEqual([[1n]]);
    await src.answer();
    expect(await first).toBe(true);
    expect(src.asked).toEqual([[1n], [2n, 3n, 4n]]);
    await src.answer();
    expect(await Promise.all(more)).toEqual([true, true, false, true]);
  });

  test("a live account is remembered for one to two TTLs; a missing one never is", async () => {
    const src = new ManualSource();
    src.live = new Set([1n]);
    let now = 0;
    const l = new AccountLiveness(src, 1000, () => now);
    const a = l.isActive(1n);
    await src.answer();
    expect(await a).toBe(true);
    const b = l.isActive(9n);
    await src.answer();
    expect(await b).toBe(false);
    expect(l.size).toBe(1);
    now = 1500; // one rotation: still remembered
    expect(await l.isActive(1n)).toBe(true);
    const c = l.isActive(9n); // not remembered as missing: asked again
    expect(src.asked).toHaveLength(3);
    await src.answer();
    expect(await c).toBe(false);
    now = 2600; // second rotation: forgotten
    const d = l.isActive(1n);
    expect(src.asked).toHaveLength(4);
    await src.answer();
    expect(await d).toBe(true);
  });

  test("forget (a deletion on this node) makes the next handshake read again", async () => {
    const src = new ManualSource();
    src.live = new Set([1n]);
    const l = new AccountLiveness(src, 30_000, () => 0);
    const a = l.isActive(1n);
    await src.answer();
    expect(await a).toBe(true);
    src.live.delete(1n);
    l.forget(1n);
    const b = l.isActive(1n);
    await src.answer();
    expect(await b).toBe(false);
  });

  test("a deletion while a query is in flight keeps that answer out of the memory", async () => {
    const src = new ManualSource();
    src.live = new Set([1n]);
    const l = new AccountLiveness(src, 30_000, () => 0);
    const a = l.isActive(1n);
    l.forget(1n);
    await src.answer();
    expect(await a).toBe(true); // read before the deletion
    expect(l.size).toBe(0);
  });

  test("a failed query rejects its handshakes; the next ones query again", async () => {
    const src = new ManualSource();
    src.live = new Set([1n]);
    src.fail = true;
    const l = new AccountLiveness(src, 30_000, () => 0);
    const a = l.isActive(1n);
    await src.answer();
    await expect(a).rejects.toThrow(/db down/);
    src.fail = false;
    const b = l.isActive(1n);
    await src.answer();
    expect(await b).toBe(true);
  });
});
