/**
 * Admin roles and their permissions (spec §5.4). Pure: a role name in, a
 * yes/no out. Permissions are `area:verb`; `*` grants everything.
 */
export const PERMISSIONS = [
  "settings:view",
  "settings:edit",
  "users:view",
  "users:edit",
  "channels:view",
  "channels:edit",
  "broadcast:send",
  "admins:manage",
] as const;

export type Permission = (typeof PERMISSIONS)[number];
export type Role = "superadmin" | "operator" | "support";

export const ROLES: Record<Role, readonly (Permission | "*")[]> = {
  superadmin: ["*"],
  operator: ["settings:view", "settings:edit", "users:view", "users:edit", "channels:view", "channels:edit", "broadcast:send"],
  support: ["users:view", "channels:view"],
};

export function isRole(name: string): name is Role {
  return Object.hasOwn(ROLES, name);
}

/** An unknown role (a row written by a newer version, a typo) has no permission at all. */
export function can(role: string, permission: Permission): boolean {
  if (!isRole(role)) return false;
  const granted = ROLES[role];
  return granted.includes("*") || granted.includes(permission);
}
