/** Shared setup of the social suites: a real node with a recording Notifier, users inserted directly, messages stored. */
import { sql } from "drizzle-orm";
import { users } from "../../src/db/schema/index.ts";
import { messages } from "../../src/db/schema/messages.ts";
import type { Config } from "../../src/config/index.ts";
import type { DeviceAddress, Notifier, Session } from "../../src/delivery/ports.ts";
import type { StoreKind } from "../../src/db/store.ts";
import { stringifyJson } from "../../src/protocol/json.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";

export interface Notice {
  readonly userIds: bigint[];
  readonly action: string;
  readonly payload: Record<string, unknown>;
}

/** Records every S2C the social area emits (the real delivery path is joined at merge). */
export class RecordingNotifier implements Notifier {
  readonly notices: Notice[] = [];
  /** When set, notify records and then rejects (a delivery outage). */
  failing = false;
  async notify(userIds: Iterable<bigint>, action: string, payload: Record<string, unknown>, _opts?: { exceptDevice?: DeviceAddress }) {
    this.notices.push({ userIds: [...userIds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), action, payload });
    if (this.failing) throw new Error("delivery unavailable");
  }
  tell(_session: Session, _action: string, _payload: Record<string, unknown>) {}
  of(action: string): Notice[] {
    return this.notices.filter((n) => n.action === action);
  }
  clear(): void {
    this.notices.length = 0;
  }
}

export interface TestUser {
  readonly id: bigint;
  readonly token: string;
  readonly nickname: string;
}

export interface SocialEnv {
  readonly node: TestNode;
  readonly notifier: RecordingNotifier;
  user(nickname?: string, accountType?: number): Promise<TestUser>;
  /** An envelope call; returns the parsed body. */
  call(user: TestUser | undefined, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Stores a message the way delivery does (the conversation list and mentions read it). */
  storeMessage(m: { chatType: "C2C" | "C2G"; from: bigint; to: bigint; payload: unknown; serverTs: number; e2ee?: unknown }): Promise<{ id: bigint; clientId: string }>;
  stop(): Promise<void>;
}

let seq = 0;

export async function socialEnv(kind: StoreKind, overrides: Partial<Config> = {}, now?: () => number): Promise<SocialEnv> {
  const notifier = new RecordingNotifier();
  const node = await startTestNode(kind, overrides, { notifier, ...(now ? { now } : {}) });
  const { db } = node.services.store;
  return {
    node,
    notifier,
    async user(nickname = `user${++seq}`, accountType = 0) {
      const id = node.services.ids.next();
      await db.insert(users).values({ id, account: `${nickname}-${id}`, passwordHash: "x", nickname, accountType });
      const { token } = await node.services.tokens.pair(id, `dev-${id}`);
      return { id, token, nickname };
    },
    async call(user, method, path, body) {
      const res = await api(node, method, path, { token: user?.token, body });
      return { status: res.status, body: res.body };
    },
    async storeMessage(m) {
      const id = node.services.ids.next();
      const clientId = `${m.chatType}.${id}.${m.serverTs}.r${++seq}`;
      await db.insert(messages).values({
        id,
        clientId,
        chatType: m.chatType,
        fromId: m.from,
        toId: m.to,
        msgType: "text",
        payload: typeof m.payload === "string" ? m.payload : stringifyJson(m.payload),
        e2ee: m.e2ee === undefined ? null : stringifyJson(m.e2ee),
        serverTs: m.serverTs,
      });
      // A group message is numbered on its group's timeline, as the delivery writer does.
      if (m.chatType === "C2G") {
        await db.execute(sql`with h as (insert into timeline_head (conv_id, last_seq) values (${m.to}, 1)
            on conflict (conv_id) do update set last_seq = timeline_head.last_seq + 1 returning last_seq)
          insert into timeline (message_id, conv_id, seq) select ${id}, ${m.to}, last_seq from h`);
      }
      return { id, clientId };
    },
    stop: () => node.stop(),
  };
}

/** Asserts an envelope success and returns its payload. */
export function payloadOf(res: { status: number; body: any }): any {
  if (res.status !== 200 || res.body?.code !== 0) {
    throw new Error(`expected success, got ${res.status} ${JSON.stringify(res.body, (_k, v) => (typeof v === "bigint" ? `${v}n` : v))}`);
  }
  return res.body.payload;
}
