import { expect, test } from "bun:test";
import { NonceMemory } from "../../../src/domain/auth/nonces.ts";

test("a nonce is fresh once, replayed until it expires, and the memory is bounded without forgetting live nonces", () => {
  let t = 1_000_000;
  const m = new NonceMemory(3, 10_000, () => t);
  expect(m.claim("a", t + 10_000)).toBe("fresh");
  expect(m.claim("a", t + 10_000)).toBe("replayed");
  expect(m.claim("b", t + 5_000)).toBe("fresh");
  expect(m.claim("c", t + 10_000)).toBe("fresh");
  // Full of live nonces: refused, never evicting one (that would reopen its replay).
  expect(m.claim("d", t + 10_000)).toBe("full");
  expect(m.claim("a", t + 10_000)).toBe("replayed");
  t += 6_000; // b expired; a sweep (at most once a second while full) frees its place
  expect(m.claim("d", t + 10_000)).toBe("fresh");
  expect(m.size).toBe(3);
  t += 5_000; // a and c expired too
  expect(m.claim("a", t + 10_000)).toBe("fresh");
});
