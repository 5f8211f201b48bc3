/**
 * The app-facing SDK: a signed-in device that stays connected. It reconnects
 * with the §8 back-off (refreshing the access token when it is due or the
 * server asks), pulls offline messages when the server says some are waiting,
 * acknowledges every stored message it receives (the CLIENT_ACK text in a
 * svc.v2 MSG_C2S frame: exact id and device), drops duplicates, and keeps sends
 * until the server acknowledges them, resending after a reconnect (the server
 * deduplicates by id). Choices: docs/client.md.
 */
import type { ChatType, ImMessage } from "../model/message.ts";
import { CloseCode, mayReconnect } from "../model/close-codes.ts";
import { backoffDelay } from "./backoff.ts";
import { IbisSocket, newMessageId, type ConnectOptions } from "./socket.ts";
import type { Incoming } from "./incoming.ts";
import { IbisApi, type ApiOptions, type WireMessage } from "./rest.ts";

export type ConnectionState = "connecting" | "online" | "offline" | "stopped";

export interface StateChange {
  readonly state: ConnectionState;
  /** Reconnect attempts since the last connection that stayed up (`offline` with 0: the first retry, immediate). */
  readonly attempt: number;
  /** When `offline`: the next attempt starts in this many ms. */
  readonly retryInMs?: number;
  /** The close code that ended the last connection, when one did. */
  readonly code?: number;
}

export interface ClientEvents {
  /** A C2C, C2G or C2S message for this device (live or pulled offline), once per id, already acknowledged. */
  message: (m: WireMessage) => void;
  /** An S2C notice (`action`): friend requests, presence, group changes, refusals, … */
  notice: (m: WireMessage) => void;
  state: (s: StateChange) => void;
}

export interface ClientOptions extends ApiOptions {
  /** Stable per install (e.g. kept in localStorage): the server tracks delivery per device. */
  readonly deviceId: string;
  /** Sub-protocols offered (default ["svc.v2"]). */
  readonly protocols?: readonly string[];
  readonly random?: () => number;
}

/** A send in progress: resolves with the SERVER_ACK; `id` is the message's §2.8 id (for a local echo). */
export type Sending = Promise<WireMessage> & { readonly id: string };

/** A send the server refused (S2C not_a_friend, in_denylist, not_group_member, permission_denied, invalid_message, …). */
export class IbisSendError extends Error {
  override readonly name = "IbisSendError";
  constructor(
    readonly action: string,
    message: string,
  ) {
    super(message);
  }
}

/** S2C that answer one connection and are never stored, so never acknowledged (docs/delivery.md). */
const TOLD = new Set(["pull_offline_msg", "please_refresh_token", "logged_another_device", "device_force_offline"]);
/** A connection that lived this long counts as a success: the next loss starts the back-off from the beginning. */
const STABLE_MS = 10_000;
/** Refresh the access token before connecting when it expires within this margin. */
const TOKEN_MARGIN_MS = 30_000;
const SEEN_MAX = 4096;

interface PendingSend {
  readonly msg: ImMessage;
  readonly resolve: (ack: WireMessage) => void;
  readonly reject: (e: Error) => void;
}

type Listeners = { [K in keyof ClientEvents]: Set<ClientEvents[K]> };

export class IbisClient {
  readonly api: IbisApi;
  #conn: IbisSocket | undefined;
  #running = false;
  #state: StateChange = { state: "stopped", attempt: 0 };
  #wake: (() => void) | undefined;
  #pulling: Promise<void> | undefined;
  #pullAgain = false;
  readonly #seen = new Set<string>();
  readonly #outbox = new Map<string, PendingSend>();
  readonly #on: Listeners = { message: new Set(), notice: new Set(), state: new Set() };

  constructor(readonly opts: ClientOptions) {
    this.api = new IbisApi({ ...opts, deviceType: opts.deviceType ?? "web" });
  }

  on<K extends keyof ClientEvents>(event: K, fn: ClientEvents[K]): () => void {
    this.#on[event].add(fn);
    return () => this.#on[event].delete(fn);
  }

  get state(): StateChange {
    return this.#state;
  }

  /** Connects and stays connected until `stop()` (needs a session: sign in through `api` first). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    void this.#run();
  }

  /** Closes for good; unacknowledged sends are rejected. */
  stop(): void {
    this.#halt();
  }

  #halt(code?: number): void {
    this.#running = false;
    this.#wake?.();
    void this.#conn?.close(CloseCode.Normal, "");
    for (const p of this.#outbox.values()) p.reject(new Error("client stopped"));
    this.#outbox.clear();
    this.#setState({ state: "stopped", attempt: 0, ...(code === undefined ? {} : { code }) });
  }

  /** Stops and forgets the session. */
  signOut(): void {
    this.stop();
    this.api.signOut();
  }

  /**
   * Sends a message; resolves with the server's `<TYPE>_SERVER_ACK` (its `server_ts` is the stored time).
   * While offline it waits in the outbox and goes out on the next connection.
   */
  send(type: ChatType, to: bigint, payload: Record<string, unknown>, msgType = "text"): Sending {
    const s = this.api.session;
    const now = Date.now();
    const id = newMessageId(type, now);
    if (!s) return Object.assign(Promise.reject(new Error("not signed in")), { id });
    const msg: ImMessage = { id, type, from: s.userId, to, payload, msg_type: msgType, created_at: now, server_ts: 0 };
    const acked = new Promise<WireMessage>((resolve, reject) => {
      this.#outbox.set(id, { msg, resolve, reject });
      if (this.#state.state === "online") this.#conn?.send(msg);
    });
    return Object.assign(acked, { id });
  }

  sendText(type: ChatType, to: bigint, text: string): Sending {
    return this.send(type, to, { text });
  }

  /** Ids of sends still waiting for their SERVER_ACK. */
  get unsent(): string[] {
    return [...this.#outbox.keys()];
  }

  // ---- connection loop -------------------------------------------------------

  async #run(): Promise<void> {
    let attempt = 0;
    while (this.#running && this.api.session) {
      this.#setState({ state: "connecting", attempt });
      let code: number | undefined;
      try {
        if (tokenDue(this.api.session.token)) await this.api.refresh();
        const conn = await this.#open();
        if (!this.#running) {
          void conn.close(); // stopped while the handshake ran
          break;
        }
        const openedAt = Date.now();
        this.#setState({ state: "online", attempt });
        for (const p of this.#outbox.values()) conn.send(p.msg);
        code = (await conn.closed).code;
        if (Date.now() - openedAt >= STABLE_MS) attempt = 0;
        if (code === CloseCode.TokenExpired) await this.api.refresh();
        else if (!mayReconnect(code)) return this.#halt(code); // replaced (4103), unsupported offer (4102), normal close
      } catch {
        // Handshake refused or server away (a browser sees no HTTP status), or a refresh failed: back off.
      }
      if (!this.#running || !this.api.session) break;
      const retryInMs = backoffDelay(attempt, this.opts.random);
      this.#setState({ state: "offline", attempt, retryInMs, ...(code === undefined ? {} : { code }) });
      attempt++;
      await new Promise<void>((r) => {
        const t = setTimeout(r, retryInMs);
        this.#wake = () => (clearTimeout(t), r());
      });
    }
    if (this.#running) this.#halt(); // signed out meanwhile (a refused refresh)
  }

  #open(): Promise<IbisSocket> {
    const o = this.opts;
    const s = this.api.session!;
    return IbisSocket.open({
      url: o.url,
      token: s.token,
      deviceId: o.deviceId,
      deviceType: o.deviceType ?? "web",
      // Bun: the CA given for REST (`fetchInit.tls`) is trusted for wss too.
      ...(o.fetchInit && "tls" in o.fetchInit ? { tls: o.fetchInit.tls as ConnectOptions["tls"] } : {}),
      protocols: o.protocols ?? ["svc.v2"],
      refreshToken: async () => {
        await this.api.refresh();
        return this.api.session!.token;
      },
      onIncoming: (e) => this.#onEvent(e),
    }).then((c) => (this.#conn = c));
  }

  #onEvent(e: Incoming): void {
    if (e.kind !== "message") return;
    const m = e.msg;
    const type: string = m.type;
    if (type.endsWith("_SERVER_ACK")) return this.#settle(m.in_reply_to ?? m.id, m);
    if (type === "CLIENT_ACK_CONFIRM") return;
    if (type === "S2C") {
      if (m.in_reply_to !== undefined && this.#outbox.has(m.in_reply_to)) {
        return this.#settle(m.in_reply_to, undefined, new IbisSendError(m.action, m.payload?.content ?? m.action));
      }
      // A failed pull is retried by the next connection's pull_offline_msg.
      if (m.action === "pull_offline_msg") this.pull().catch(() => undefined);
      if (m.in_reply_to === undefined && !TOLD.has(m.action)) this.#conn?.ack({ type: "S2C", msgId: m.id }, "text");
    } else {
      this.#conn?.ack({ type: type as ChatType, msgId: m.id }, "text");
    }
    this.#deliver(m);
  }

  #settle(id: string, ack?: WireMessage, err?: Error): void {
    const p = this.#outbox.get(id);
    if (!p) return;
    this.#outbox.delete(id);
    if (err) p.reject(err);
    else p.resolve(ack!);
  }

  /** Hands a message to the app once per id (a live push and the offline pull may both bring it). */
  #deliver(m: WireMessage): void {
    if (this.#seen.has(m.id)) return;
    this.#seen.add(m.id);
    if (this.#seen.size > SEEN_MAX) this.#seen.delete(this.#seen.values().next().value!);
    const listeners = m.type === "S2C" ? this.#on.notice : this.#on.message;
    for (const fn of listeners) fn(m);
  }

  /**
   * Pulls this device's pending messages (REST, oldest first) and acknowledges
   * them, page by page. Runs on `pull_offline_msg`; a call while one runs makes it run once more.
   */
  pull(): Promise<void> {
    if (this.#pulling) {
      this.#pullAgain = true;
      return this.#pulling;
    }
    this.#pulling = (async () => {
      do {
        this.#pullAgain = false;
        let more = true;
        while (more) {
          const page = await this.api.offline();
          for (const m of page.list) this.#deliver(m);
          if (page.list.length > 0) await this.api.offlineAck(page.list.map((m) => m.id as string));
          more = page.has_more;
        }
      } while (this.#pullAgain);
    })().finally(() => (this.#pulling = undefined));
    return this.#pulling;
  }

  #setState(s: StateChange): void {
    this.#state = s;
    for (const fn of this.#on.state) fn(s);
  }
}

/** Whether a JWT expires within the margin (its `exp` claim, seconds); unreadable counts as due. */
function tokenDue(token: string, now = Date.now()): boolean {
  try {
    const b64 = token.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(b64)).exp * 1000 - now < TOKEN_MARGIN_MS;
  } catch {
    return true;
  }
}
