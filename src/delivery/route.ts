/**
 * Who receives an uplink message, decided against the social graph before it
 * is stored. A refusal is an S2C action answered to the sender; the message is
 * not stored.
 */
import type { Failure, FailureKind, Result } from "../domain/errors.ts";
import type { Bot } from "./bots.ts";
import type { ChatType, ImMessage, SocialGraph } from "./ports.ts";

export interface Route {
  /** Users whose inbox gets the message: receiver(s) and the sender (for the sender's other devices). */
  readonly inbox: readonly bigint[];
  readonly bot?: Bot;
}

export type Routed = { ok: true; route: Route } | { ok: false; action: string; content: string };

/** §6/§7.6: the S2C action a refusal is answered with. */
const REFUSAL: Partial<Record<FailureKind, string>> = {
  not_a_friend: "not_a_friend",
  in_denylist: "in_denylist",
  not_group_member: "not_group_member",
  permission_denied: "permission_denied",
  forbidden: "permission_denied",
};

export function refusal(f: Failure): { ok: false; action: string; content: string } {
  return { ok: false, action: REFUSAL[f.kind] ?? "invalid_message", content: f.msg };
}

const withSender = (users: readonly bigint[], from: bigint): bigint[] => (users.includes(from) ? [...users] : [...users, from]);

export async function route(
  msg: ImMessage & { type: Exclude<ChatType, "S2C"> },
  social: SocialGraph,
  bots: ReadonlyMap<bigint, Bot | undefined>,
): Promise<Routed> {
  const from = msg.from!;
  switch (msg.type) {
    case "C2C":
      return c2c(msg, await social.checkC2C(from, msg.to, { encrypted: msg.e2ee !== undefined }));
    case "C2G":
      return c2g(from, await social.groupMembers(from, msg.to));
    case "C2S":
      return c2s(from, msg.to, bots);
  }
}

/**
 * `route`'s answer when the social graph has it at hand (its cache), else undefined. The common case by far: a
 * sender's conversations are warm after their first message, and the answer then costs no promise.
 */
export function routeNow(
  msg: ImMessage & { type: Exclude<ChatType, "S2C"> },
  social: SocialGraph,
  bots: ReadonlyMap<bigint, Bot | undefined>,
): Routed | undefined {
  const from = msg.from!;
  switch (msg.type) {
    case "C2C": {
      const r = social.checkC2CNow?.(from, msg.to, { encrypted: msg.e2ee !== undefined });
      return r && c2c(msg, r);
    }
    case "C2G": {
      const r = social.groupMembersNow?.(from, msg.to);
      return r && c2g(from, r);
    }
    case "C2S":
      return c2s(from, msg.to, bots);
  }
}

const c2c = (msg: ImMessage, r: Result<void>): Routed => (r.ok ? { ok: true, route: { inbox: withSender([msg.to], msg.from!) } } : refusal(r.error));

const c2g = (from: bigint, r: Result<readonly bigint[]>): Routed => (r.ok ? { ok: true, route: { inbox: withSender(r.value, from) } } : refusal(r.error));

function c2s(from: bigint, to: bigint, bots: ReadonlyMap<bigint, Bot | undefined>): Routed {
  if (!bots.has(to)) return { ok: false, action: "permission_denied", content: `C2S target ${to} is not a bot` };
  const bot = bots.get(to);
  return { ok: true, route: { inbox: [from], ...(bot ? { bot } : {}) } };
}
