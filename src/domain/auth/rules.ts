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

export const DEVICE_TYPES: ReadonlySet<string> = new Set(["ios", "android", "web", "desktop"]);

/** Printable ASCII without spaces or commas (the text CLIENT_ACK is comma-separated), 1–128 chars. */
export const DEVICE_ID = /^[\x21-\x2b\x2d-\x7e]{1,128}$/;

/**
 * Device headers at sign-up and login (X-Device-ID / X-Device-Type), trimmed, "" when absent; refused (400)
 * when the WebSocket handshake would refuse them, so no token names a device that can never connect.
 */
export function deviceOf(id: string | undefined, type: string | undefined): Result<{ deviceId: string; deviceType: string }> {
  const deviceId = (id ?? "").trim();
  const deviceType = (type ?? "").trim().toLowerCase();
  if (deviceId !== "" && !DEVICE_ID.test(deviceId)) return fail("bad_request", "X-Device-ID: 1–128 printable ASCII characters, no space or comma");
  if (deviceType !== "" && !DEVICE_TYPES.has(deviceType)) return fail("bad_request", `X-Device-Type: one of ${[...DEVICE_TYPES].join(", ")}`);
  return ok({ deviceId, deviceType });
}
