import { describe, expect, test } from "bun:test";
import { AccountLiveness, type LivenessSource, type SessionFact, type SessionKey } from "../../src/domain/auth/liveness.ts";

/** A source whose queries the test completes by hand, recording what each asked. */
class ManualSource implements LivenessSource {
  live = new Set<bigint>();
  suspended = new Set<bigint>();
  /** Session generation per "user/device" (absent: 0). */
  gens = new Map<string, number>();
  readonly asked: bigint[][] = [];
  readonly #open: (() => void)[] = [];
  fail = false;
  sessionsAmong(keys: readonly SessionKey[]): Promise<readonly SessionFact[]> {
    this.asked.push(keys.map((k) => k.userId));
    const fact = (k: SessionKey): SessionFact =>
      !this.live.has(k.userId) ? "gone" : this.suspended.has(k.userId) ? "suspended" : (this.gens.get(`${k.userId}/${k.deviceId}`) ?? 0);
    return new Promise((resolve, reject) => {
      this.#open.push(() => (this.fail ? reject(new Error("db down")) : resolve(keys.map(fact))));
    });
  }
  /** Answers the oldest query in flight. */
  async answer(): Promise<void> {
    this.#open.shift()!();
    for (let i = 0; i < 5; i++) await Promise.resolve();
  }
}

/** The next turn of the event loop (background reads start on one). */
const turn = () => new Promise<void>((r) => setImmediate(r));

/** The check of a generation-0 token of device "d": true when accepted. */
const isActive = (l: AccountLiveness, userId: bigint) => l.check(userId, "d", 0).then((v) => v === "ok");

describe("the check behind every token (AccountLiveness)", () => {
  test("handshakes arriving while a query is in flight share the next one", async () => {
    const src = new ManualSource();
    src.live = new Set([1n, 2n, 3n]);
    const l = new AccountLiveness(src, 30_000, () => 0);
    const first = isActive(l, 1n);
    const more = [isActive(l, 2n), isActive(l, 3n), isActive(l, 4n), isActive(l, 2n)];
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
    const a = isActive(l, 1n);
    await src.answer();
    expect(await a).toBe(true);
    const b = isActive(l, 9n);
    await src.answer();
    expect(await b).toBe(false);
    expect(l.size).toBe(1);
    now = 1500; // one rotation: still remembered (not used here, so not read again either)
    const c = isActive(l, 9n); // not remembered as missing: asked again
    expect(src.asked).toHaveLength(3);
    await src.answer();
    expect(await c).toBe(false);
    expect(l.size).toBe(1);
    now = 2600; // second rotation: forgotten
    const d = isActive(l, 1n);
    expect(src.asked).toHaveLength(4);
    await src.answer();
    expect(await d).toBe(true);
  });

  test("forget (a deletion on this node) makes the next handshake read again", async () => {
    const src = new ManualSource();
    src.live = new Set([1n]);
    const l = new AccountLiveness(src, 30_000, () => 0);
    const a = isActive(l, 1n);
    await src.answer();
    expect(await a).toBe(true);
    src.live.delete(1n);
    l.forget(1n);
    const b = isActive(l, 1n);
    await src.answer();
    expect(await b).toBe(false);
  });

  test("a deletion while a query is in flight keeps that answer out of the memory", async () => {
    const src = new ManualSource();
    src.live = new Set([1n]);
    const l = new AccountLiveness(src, 30_000, () => 0);
    const a = isActive(l, 1n);
    l.forget(1n);
    await src.answer();
    expect(await a).toBe(true); // read before the deletion
    expect(l.size).toBe(0);
  });

  test("with a depth (PostgreSQL), checks asked while queries run go out beside them; the rest wait together", async () => {
    const src = new ManualSource();
    src.live = new Set([1n, 2n, 3n, 4n, 5n]);
    const l = new AccountLiveness(src, 30_000, () => 0, undefined, 3);
    const firsts = [isActive(l, 1n), isActive(l, 2n), isActive(l, 3n)];
    const later = [isActive(l, 4n), isActive(l, 5n)];
    expect(src.asked).toEqual([[1n], [2n], [3n]]);
    await src.answer();
    expect(src.asked).toEqual([[1n], [2n], [3n], [4n, 5n]]); // the freed slot takes every waiting check
    await src.answer();
    await src.answer();
    await src.answer();
    expect(await Promise.all([...firsts, ...later])).toEqual([true, true, true, true, true]);
    expect(l.size).toBe(5);
  });

  test("with a depth, a query started before a revocation stays out of the memory while one started after it counts", async () => {
    const src = new ManualSource();
    src.live = new Set([1n]);
    const l = new AccountLiveness(src, 30_000, () => 0, undefined, 3);
    const before = l.check(1n, "d", 0);
    src.gens.set("1/d", 1); // signed out: generation 1 now
    l.forget(1n);
    const after = l.check(1n, "d", 0);
    expect(src.asked).toEqual([[1n], [1n]]); // the second did not join the query in flight
    await src.answer();
    await src.answer();
    expect(await before).toBe("revoked");
    expect(await after).toBe("revoked");
    expect(l.known(1n, "d", 0)).toBe("revoked"); // remembered from the query after the revocation only
    expect(l.known(1n, "d", 1)).toBe("ok");
  });

  test("with a depth, a query that read an older generation and ends last does not put it back", async () => {
    // Each query reads the generation when it starts; the test ends them in the order it chooses.
    let gen = 0;
    const ends: (() => void)[] = [];
    const src: LivenessSource = {
      sessionsAmong(keys) {
        const read = keys.map((): SessionFact => gen);
        return new Promise((resolve) => ends.push(() => resolve(read)));
      },
    };
    const l = new AccountLiveness(src, 30_000, () => 0, undefined, 3);
    const old = l.check(1n, "d", 0); // reads generation 0
    gen = 1; // signed out elsewhere; this node's invalidation has not come yet
    const fresh = l.check(1n, "d", 1); // reads generation 1, beside the first
    ends[1]!();
    expect(await fresh).toBe("ok");
    ends[0]!();
    expect(await old).toBe("ok"); // its own answer, read before the sign-out
    expect(l.known(1n, "d", 0)).toBe("revoked"); // the memory kept generation 1
    expect(l.known(1n, "d", 1)).toBe("ok");
  });

  test("a failed query rejects its handshakes; the next ones query again", async () => {
    const src = new ManualSource();
    src.live = new Set([1n]);
    src.fail = true;
    const l = new AccountLiveness(src, 30_000, () => 0);
    const a = isActive(l, 1n);
    await src.answer();
    await expect(a).rejects.toThrow(/db down/);
    src.fail = false;
    const b = isActive(l, 1n);
    await src.answer();
    expect(await b).toBe(true);
  });
});

describe("session generations in the check", () => {
  test("an older generation is refused from memory; a newer one reads again (the memory is behind)", async () => {
    const src = new ManualSource();
    src.live = new Set([1n]);
    src.gens.set("1/phone", 2);
    const l = new AccountLiveness(src, 30_000, () => 0);
    const a = l.check(1n, "phone", 2);
    await src.answer();
    expect(await a).toBe("ok");
    expect(await l.check(1n, "phone", 1)).toBe("revoked"); // no query
    expect(src.asked).toHaveLength(1);
    src.gens.set("1/phone", 3); // revoked elsewhere, invalidation not here yet; a new login's token arrives
    const b = l.check(1n, "phone", 3);
    expect(src.asked).toHaveLength(2);
    await src.answer();
    expect(await b).toBe("ok");
    expect(await l.check(1n, "phone", 2)).toBe("revoked");
  });

  test("`known` answers from memory alone (the handshake then upgrades in the same turn), else nothing", async () => {
    const src = new ManualSource();
    src.live = new Set([1n]);
    src.gens.set("1/phone", 2);
    const l = new AccountLiveness(src, 30_000, () => 0);
    expect(l.known(1n, "phone", 2)).toBeUndefined(); // never asked: the database must be
    const a = l.check(1n, "phone", 2);
    await src.answer();
    expect(await a).toBe("ok");
    const cases: [number, "ok" | "revoked" | undefined][] = [[2, "ok"], [1, "revoked"], [3, undefined]];
    for (const [gen, want] of cases) expect(l.known(1n, "phone", gen)).toBe(want);
    expect(src.asked).toHaveLength(1); // none of these queried
    l.forget(1n);
    expect(l.known(1n, "phone", 2)).toBeUndefined();
  });

  test("suspended and deleted accounts are never remembered", async () => {
    const src = new ManualSource();
    src.live = new Set([1n]);
    src.suspended = new Set([1n]);
    const l = new AccountLiveness(src, 30_000, () => 0);
    const a = l.check(1n, "phone", 0);
    await src.answer();
    expect(await a).toBe("suspended");
    expect(l.size).toBe(0);
    src.suspended.clear();
    const b = l.check(1n, "phone", 0);
    await src.answer();
    expect(await b).toBe("ok");
  });

  test("forget drops every device of the user", async () => {
    const src = new ManualSource();
    src.live = new Set([1n, 2n]);
    const l = new AccountLiveness(src, 30_000, () => 0);
    const all = [l.check(1n, "a", 0), l.check(1n, "b", 0), l.check(2n, "a", 0)];
    await src.answer();
    await src.answer();
    await Promise.all(all);
    expect(l.size).toBe(3);
    l.forget(1n);
    expect(l.size).toBe(1);
  });
});

describe("entries used in their second window are read again in the background", () => {
  /** A memory with user 1's device "d" remembered at 0 and now in its second window (TTL 1000, now 1500). */
  async function aged(live = [1n]) {
    const src = new ManualSource();
    src.live = new Set(live);
    const clock = { now: 0 };
    const l = new AccountLiveness(src, 1000, () => clock.now);
    const all = live.map((u) => isActive(l, u));
    // The first check goes out alone, the others together once it is answered.
    for (let q = 0; q < Math.min(live.length, 2); q++) await src.answer();
    expect(await Promise.all(all)).toEqual(live.map(() => true));
    src.asked.length = 0;
    clock.now = 1500;
    return { src, clock, l };
  }

  test("answered from memory at once, read once more off the path, and remembered past the second rotation", async () => {
    const { src, clock, l } = await aged();
    expect(l.known(1n, "d", 0)).toBe("ok"); // no wait: the same answer as before
    expect(l.known(1n, "d", 0)).toBe("ok"); // a second use while the read is due asks nothing more
    expect(src.asked).toEqual([]);
    await turn();
    expect(src.asked).toEqual([[1n]]);
    await src.answer();
    clock.now = 1900; // the read of 1500 is in the younger memory: a use now reads nothing
    expect(l.known(1n, "d", 0)).toBe("ok");
    await turn();
    expect(src.asked).toHaveLength(1);
    clock.now = 2600; // past the second rotation of the entry of 0: the read of 1500 answers, and is read again
    expect(l.known(1n, "d", 0)).toBe("ok");
    await turn();
    expect(src.asked).toHaveLength(2);
  });

  test("the uses of one turn share one statement", async () => {
    const { src, l } = await aged([1n, 2n, 3n]);
    for (const u of [1n, 2n, 3n, 2n]) expect(l.known(u, "d", 0)).toBe("ok");
    await turn();
    expect(src.asked).toEqual([[1n, 2n, 3n]]);
  });

  test("found suspended or gone, the entry is dropped: the next check asks and refuses", async () => {
    const { src, l } = await aged([1n, 2n]);
    src.suspended.add(1n);
    src.live.delete(2n);
    expect([l.known(1n, "d", 0), l.known(2n, "d", 0)]).toEqual(["ok", "ok"]); // the memory, within its bound
    await turn();
    await src.answer();
    expect([l.known(1n, "d", 0), l.known(2n, "d", 0)]).toEqual([undefined, undefined]);
    expect(l.size).toBe(0);
    const [a, b] = [l.check(1n, "d", 0), l.check(2n, "d", 0)];
    await src.answer();
    await src.answer();
    expect([await a, await b]).toEqual(["suspended", "gone"]);
  });

  test("a newer generation found in the background refuses the older token from memory", async () => {
    const { src, l } = await aged();
    src.gens.set("1/d", 1); // signed out elsewhere; the invalidation did not reach this node
    expect(l.known(1n, "d", 0)).toBe("ok");
    await turn();
    await src.answer();
    expect(l.known(1n, "d", 0)).toBe("revoked");
    expect(l.known(1n, "d", 1)).toBe("ok");
  });

  test("a revocation while the read runs keeps its answer out; a failed read leaves the entry to age out", async () => {
    const revoked = await aged();
    expect(revoked.l.known(1n, "d", 0)).toBe("ok");
    await turn();
    revoked.l.forget(1n);
    await revoked.src.answer();
    expect(revoked.l.known(1n, "d", 0)).toBeUndefined();
    expect(revoked.l.size).toBe(0);

    const failed = await aged();
    failed.src.fail = true;
    expect(failed.l.known(1n, "d", 0)).toBe("ok");
    await turn();
    await failed.src.answer();
    expect(failed.l.known(1n, "d", 0)).toBe("ok"); // still the entry of 0, in its second window
    failed.clock.now = 2600;
    expect(failed.l.known(1n, "d", 0)).toBeUndefined(); // and gone at its second rotation, as without the read
  });
});
