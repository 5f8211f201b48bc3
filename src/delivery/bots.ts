/**
 * Server-side bots C2S can address (§2.8 bot addressing). The first configured
 * bot id is the built-in echo bot, so the C2S path is testable end to end.
 */
import { toId } from "../ids/tsid.ts";
import type { ImMessage } from "./ports.ts";

export interface Bot {
  readonly id: bigint;
  /** Handles one stored C2S message; `reply` stores and pushes a C2S answer to the sender. */
  handle(msg: ImMessage, reply: (payload: Record<string, unknown>) => Promise<void>): Promise<void>;
}

/** Answers the sender with the same text and topic_id. */
export function echoBot(id: bigint): Bot {
  return {
    id,
    async handle(msg, reply) {
      const p = msg.payload as { text?: unknown; topic_id?: unknown };
      await reply({ text: p.text, topic_id: p.topic_id });
    },
  };
}

/** Bots from config `bots` (comma-separated ids), plus any supplied implementations. */
export function configuredBots(list: string, extra: readonly Bot[] = []): Map<bigint, Bot | undefined> {
  const out = new Map<bigint, Bot | undefined>();
  const ids = list.split(",").map((s) => toId(s.trim())).filter((v): v is bigint => v !== undefined);
  ids.forEach((id, i) => out.set(id, i === 0 ? echoBot(id) : undefined));
  for (const b of extra) out.set(b.id, b);
  return out;
}
