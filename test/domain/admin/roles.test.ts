import { describe, expect, test } from "bun:test";
import { can, PERMISSIONS, ROLES, type Permission } from "../../../src/domain/admin/roles.ts";

describe("admin roles", () => {
  test.each([
    ["superadmin", "settings:view", true],
    ["superadmin", "admins:manage", true],
    ["operator", "settings:view", true],
    ["operator", "admins:manage", false],
    ["support", "users:view", true],
    ["support", "settings:view", false],
    ["nobody", "settings:view", false],
    ["", "users:view", false],
    ["__proto__", "users:view", false],
  ] as [string, Permission, boolean][])("%s may %s: %p", (role, perm, want) => {
    expect(can(role, perm)).toBe(want);
  });

  test("every granted permission is a known one", () => {
    for (const granted of Object.values(ROLES)) {
      for (const p of granted) expect(p === "*" || (PERMISSIONS as readonly string[]).includes(p)).toBe(true);
    }
  });
});
