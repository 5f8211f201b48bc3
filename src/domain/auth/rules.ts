import { fail, ok, type Result } from "../errors.ts";

/**
 * Account and password rules (docs/auth.md). Pure, table-tested.
 * Accounts are compared case-insensitively: they are stored lower-cased.
 */
const ACCOUNT = /^[a-z0-9][a-z0-9._@+-]{2,63}$/;
export const PASSWORD_MIN = 6;
export const PASSWORD_MAX = 128;
export const NICKNAME_MAX = 64;

export function normaliseAccount(raw: string): string {
  return raw.trim().toLowerCase();
}

export function checkAccount(raw: string): Result<string> {
  const account = normaliseAccount(raw);
  if (!ACCOUNT.test(account)) {
    return fail("bad_request", "account must be 3-64 characters: letters, digits and . _ @ + - (starting with a letter or digit)");
  }
  return ok(account);
}

export function checkPassword(pwd: string): Result<string> {
  if (pwd.length < PASSWORD_MIN || pwd.length > PASSWORD_MAX) {
    return fail("bad_request", `password must be ${PASSWORD_MIN}-${PASSWORD_MAX} characters`);
  }
  return ok(pwd);
}

export function checkNickname(raw: string | undefined, account: string): Result<string> {
  const nickname = (raw ?? "").trim();
  if (nickname.length > NICKNAME_MAX) return fail("bad_request", `nickname must be at most ${NICKNAME_MAX} characters`);
  return ok(nickname || account.split("@")[0]!);
}

/** Device headers as they arrive (X-Device-ID / X-Device-Type): trimmed, bounded, "" when absent. */
export function deviceOf(id: string | undefined, type: string | undefined): { deviceId: string; deviceType: string } {
  return { deviceId: (id ?? "").trim().slice(0, 128), deviceType: (type ?? "").trim().slice(0, 32) };
}
