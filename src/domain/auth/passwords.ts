/**
 * Password hashing (spec §5): argon2id through Bun.password. The hash string
 * carries its own salt and cost, so changing the cost affects new hashes only.
 */
export const DEFAULT_MEMORY_KIB = 65_536;

export function hashPassword(plain: string, memoryKib = DEFAULT_MEMORY_KIB): Promise<string> {
  return Bun.password.hash(plain, { algorithm: "argon2id", memoryCost: memoryKib, timeCost: 2 });
}

export async function verifyPassword(plain: string, hash: string): Promise<boolean> {
  try {
    return await Bun.password.verify(plain, hash);
  } catch {
    // A malformed stored hash is a failed login, not a 500.
    return false;
  }
}

const dummies = new Map<number, Promise<string>>();

/**
 * Verifies `plain` against `hash`; when there is no hash (no such account) it
 * verifies against a dummy of the same cost and answers false, so a missing
 * account takes as long as a wrong password.
 */
export async function verifyOrDummy(plain: string, hash: string | undefined, memoryKib: number): Promise<boolean> {
  if (hash !== undefined) return verifyPassword(plain, hash);
  let dummy = dummies.get(memoryKib);
  if (!dummy) dummies.set(memoryKib, (dummy = hashPassword(crypto.randomUUID(), memoryKib)));
  await verifyPassword(plain, await dummy);
  return false;
}
