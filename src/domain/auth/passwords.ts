/** Password hashing (spec §5): argon2id through Bun.password; the hash string carries its own salt and cost. */
export function hashPassword(plain: string): Promise<string> {
  return Bun.password.hash(plain, { algorithm: "argon2id" });
}

export async function verifyPassword(plain: string, hash: string): Promise<boolean> {
  try {
    return await Bun.password.verify(plain, hash);
  } catch {
    // A malformed stored hash is a failed login, not a 500.
    return false;
  }
}
