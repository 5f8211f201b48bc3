/**
 * The SDK's transport: one Ibis WebSocket with any of the four sub-protocols
 * (spec §4.5). Buffers everything from open (nothing is lost between open and
 * the first `next`), answers svc.v2 heartbeats, sends messages as JSON (inside
 * MSG frames on svc.v2) and acknowledgements in the text or frame form,
 * follows the refresh-token flow and reconnects with the §8 back-off. Works in
 * Bun (headers) and browsers (query). No protobuf encoder: a browser bundle
 * carries only the decoder; `IbisConnection` (connection.ts) adds the
 * protobuf forms for tests and tools.
 */
import type { ChatType, ImMessage } from "../model/message.ts";
import { ackFrame, CHAT_ACK_DIRECTION, encodeFrame, FrameType, pingFrame, pongFrame } from "../protocol/frame.ts";
import { utf8 } from "../protocol/json.ts";
import { clientAckText, messageJson, msgFrameType } from "../protocol/message.ts";
import { tsidSegment } from "../protocol/uplink.ts";
import { mayReconnect } from "../model/close-codes.ts";
import { backoffDelay } from "./backoff.ts";
import { decodeBinary, decodeText, type Incoming } from "./incoming.ts";

export type SubProtocolName = "svc.v2" | "svc-protobuf" | "svc-json" | "text";
export type DeviceType = "ios" | "android" | "web" | "desktop";
export type AckForm = "text" | "protobuf" | "frame";
export type SocketAckForm = Exclude<AckForm, "protobuf">;

export interface ConnectOptions {
  /** Server base (http(s):// or ws(s)://); `/ws` is used when the URL has no path. */
  readonly url: string;
  readonly token: string;
  readonly deviceId: string;
  readonly deviceType?: DeviceType;
  /** Sub-protocols offered, in order (default ["svc.v2"]); [] offers none (server picks svc-json). */
  readonly protocols?: readonly string[];
  /** Browser style: token, did and dtype in the query instead of headers (default: when not running in Bun). */
  readonly queryAuth?: boolean;
  readonly headers?: Readonly<Record<string, string>>;
  /** Bun only: TLS options for wss, e.g. `{ ca }` to trust a private certificate authority. */
  readonly tls?: { readonly ca?: string; readonly rejectUnauthorized?: boolean };
  /** Reconnect after a close the server marks reconnectable (default false). */
  readonly reconnect?: boolean;
  /** Answer svc.v2 heartbeat pings (default true). */
  readonly autoPong?: boolean;
  /** Asked on please_refresh_token; the answer is sent as C2S refresh_token and used for reconnects. */
  readonly refreshToken?: () => Promise<string>;
  readonly random?: () => number;
  /** Takes every event no `next` waits for, instead of buffering it (long-running clients: the buffer would grow). */
  readonly onIncoming?: (e: Incoming) => void;
}

interface Waiter {
  readonly pred: (e: Incoming) => boolean;
  readonly resolve: (e: Incoming) => void;
  readonly reject: (e: Error) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

const ID_EPOCH_MS = 1_577_836_800_000;
/** Bun's client takes headers; browsers cannot send any (the query carries the credentials there). */
const IN_BUN = "Bun" in globalThis;
let idSeq = 0;

/** A client message id `<TYPE>.<tsid>.<ms>.<random>` with a client-made time-sortable tsid. */
export function newMessageId(type: ChatType, now = Date.now()): string {
  idSeq = (idSeq + 1) & 0x3fffff;
  const tsid = (BigInt(now - ID_EPOCH_MS) << 22n) | BigInt(idSeq);
  return `${type}.${tsid}.${now}.${Math.random().toString(36).slice(2, 10) || "0"}`;
}

export function wsUrl(base: string): string {
  const u = new URL(base);
  if (u.protocol === "http:") u.protocol = "ws:";
  else if (u.protocol === "https:") u.protocol = "wss:";
  if (u.pathname === "/" || u.pathname === "") u.pathname = "/ws";
  return u.toString();
}

export class IbisSocket {
  #ws!: WebSocket;
  #token: string;
  #protocol = "";
  readonly #queue: Incoming[] = [];
  #waiters: Waiter[] = [];
  #attempt = 0;
  #userClosed = false;
  #final: Promise<{ code: number; reason: string }>;
  #resolveFinal!: (v: { code: number; reason: string }) => void;

  /** Not connected yet: use `open`. */
  constructor(readonly opts: ConnectOptions) {
    this.#token = opts.token;
    this.#final = new Promise((r) => (this.#resolveFinal = r));
  }

  /** Opens a connection; rejects when the handshake fails (the server's HTTP refusal is not visible to WebSocket clients). */
  static async open<T extends IbisSocket>(this: new (opts: ConnectOptions) => T, opts: ConnectOptions): Promise<T> {
    const c = new this(opts);
    await c.#connect();
    return c;
  }

  /** The negotiated sub-protocol ("svc-json" when none was offered). */
  get protocol(): string {
    return this.#protocol;
  }
  get token(): string {
    return this.#token;
  }
  get readyState(): number {
    return this.#ws.readyState;
  }
  /** Resolves on the final close (no reconnect follows). */
  get closed(): Promise<{ code: number; reason: string }> {
    return this.#final;
  }

  #connect(): Promise<void> {
    const o = this.opts;
    const url = new URL(wsUrl(o.url));
    const headers: Record<string, string> = { ...o.headers };
    if (o.queryAuth ?? !IN_BUN) {
      url.searchParams.set("token", this.#token);
      url.searchParams.set("did", o.deviceId);
      if (o.deviceType) url.searchParams.set("dtype", o.deviceType);
    } else {
      headers.authorization = `Bearer ${this.#token}`;
      headers["x-device-id"] = o.deviceId;
      if (o.deviceType) headers["x-device-type"] = o.deviceType;
    }
    const protocols = [...(o.protocols ?? ["svc.v2"])];
    // Bun takes headers only in ONE options object; browsers take (url, protocols).
    const ws =
      IN_BUN
        ? new WebSocket(url.toString(), { headers, protocols, tls: o.tls } as unknown as string[])
        : new WebSocket(url.toString(), protocols);
    ws.binaryType = "arraybuffer";
    this.#ws = ws;
    return new Promise((resolve, reject) => {
      let opened = false;
      ws.onopen = () => {
        opened = true;
        this.#attempt = 0;
        this.#protocol = ws.protocol || "svc-json";
        this.#push({ kind: "open", protocol: this.#protocol });
        resolve();
      };
      ws.onmessage = (ev: MessageEvent) => this.#onData(ev.data);
      ws.onclose = (ev: CloseEvent) => {
        this.#push({ kind: "close", code: ev.code, reason: ev.reason });
        if (!opened) reject(new Error(`WebSocket handshake failed (close ${ev.code})`));
        this.#afterClose(ev.code, ev.reason, opened);
      };
    });
  }

  #afterClose(code: number, reason: string, wasOpen: boolean): void {
    if (this.opts.reconnect && !this.#userClosed && wasOpen && mayReconnect(code)) {
      const delay = backoffDelay(this.#attempt++, this.opts.random);
      setTimeout(() => void this.#connect().catch(() => this.#afterClose(1006, "reconnect failed", true)), delay);
      return;
    }
    this.#resolveFinal({ code, reason });
    for (const w of this.#waiters) {
      clearTimeout(w.timer);
      w.reject(new Error(`connection closed (${code} ${reason})`));
    }
    this.#waiters = [];
  }

  #onData(data: string | ArrayBuffer): void {
    const e = typeof data === "string" ? decodeText(data) : decodeBinary(new Uint8Array(data), this.#protocol === "svc.v2");
    if (e.kind === "ping" && this.opts.autoPong !== false) this.sendRaw(pongFrame(e.seq));
    if (e.kind === "message" && e.msg.action === "please_refresh_token" && this.opts.refreshToken) {
      // A failed refresh is answered by the server's 4101 close at the end of the window.
      this.opts.refreshToken().then(
        (t) => this.sendRefresh(t),
        () => undefined,
      );
    }
    this.#push(e);
  }

  #push(e: Incoming): void {
    const i = this.#waiters.findIndex((w) => w.pred(e));
    if (i >= 0) {
      const [w] = this.#waiters.splice(i, 1);
      clearTimeout(w!.timer);
      w!.resolve(e);
      return;
    }
    if (this.opts.onIncoming) this.opts.onIncoming(e);
    else this.#queue.push(e);
  }

  /** The next event matching `pred` (buffered ones first); rejects after `timeoutMs` or on the final close. */
  next(pred: (e: Incoming) => boolean = () => true, timeoutMs = 5_000): Promise<Incoming> {
    const i = this.#queue.findIndex(pred);
    if (i >= 0) return Promise.resolve(this.#queue.splice(i, 1)[0]!);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w.timer !== timer);
        reject(new Error(`no matching event within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiters.push({ pred, resolve, reject, timer });
    });
  }

  /** The next §2.8 message matching `pred`. */
  async nextMessage(pred: (msg: Record<string, any>) => boolean = () => true, timeoutMs?: number): Promise<Record<string, any>> {
    const e = await this.next((e) => e.kind === "message" && pred(e.msg), timeoutMs);
    return (e as Extract<Incoming, { kind: "message" }>).msg;
  }

  /** The next S2C with this action. */
  nextAction(action: string, timeoutMs?: number): Promise<Record<string, any>> {
    return this.nextMessage((m) => m.action === action, timeoutMs);
  }

  /** Buffered events not yet taken by `next`. */
  get pending(): readonly Incoming[] {
    return this.#queue;
  }

  sendRaw(data: string | Uint8Array): void {
    this.#ws.send(data);
  }

  /**
   * Sends binary message bytes as this connection carries them: in a MSG
   * frame of `frameType` on svc.v2, bare on svc-protobuf.
   */
  protected sendBinary(frameType: number, body: Uint8Array): void {
    this.sendRaw(this.#protocol === "svc.v2" ? encodeFrame(frameType, body) : body);
  }

  get #binary(): boolean {
    return this.#protocol === "svc.v2" || this.#protocol === "svc-protobuf";
  }

  /** Sends a business message as JSON (UTF-8 inside a MSG frame on svc.v2). */
  send(msg: ImMessage): void {
    this.#sendJson(msg);
  }

  #sendJson(msg: ImMessage): void {
    const json = messageJson(msg);
    if (this.#binary) this.sendBinary(msgFrameType(msg.type), utf8(json));
    else this.sendRaw(json);
  }

  /** Business acknowledgement: the text form (in a MSG_C2S frame on svc.v2), or a frame ACK (svc.v2 only, names the tsid). */
  ack(ack: { type: ChatType; msgId: string }, form: SocketAckForm = "text"): void {
    if (form === "frame") {
      const tsid = tsidSegment(ack.msgId);
      if (this.#protocol !== "svc.v2" || tsid === undefined) throw new Error("frame ACK needs svc.v2 and an id with a tsid segment");
      this.sendRaw(ackFrame(BigInt(tsid), CHAT_ACK_DIRECTION[ack.type]));
      return;
    }
    const text = clientAckText({ ...ack, did: this.opts.deviceId });
    if (this.#binary) this.sendBinary(FrameType.MsgC2S, utf8(text));
    else this.sendRaw(text);
  }

  /** svc.v2 heartbeat ping. */
  ping(seq: number): void {
    this.sendRaw(pingFrame(seq));
  }

  /** Presents a fresh access token (C2S refresh_token, docs/websocket.md); returns the request id. */
  sendRefresh(token: string): string {
    this.#token = token;
    const id = newMessageId("C2S");
    const msg: ImMessage = { id, type: "C2S", from: null, to: 0n, action: "refresh_token", payload: { token }, server_ts: 0 };
    // JSON on every sub-protocol: the server decodes a JSON object first in binary messages too.
    this.#sendJson(msg);
    return id;
  }

  /** Refresh and wait for the answer: S2C token_refreshed, or invalid_message (reason invalid_token). */
  async refresh(token: string, timeoutMs?: number): Promise<Record<string, any>> {
    const id = this.sendRefresh(token);
    return this.nextMessage((m) => m.in_reply_to === id, timeoutMs);
  }

  /** Closes for good (no reconnect); resolves on the close. */
  close(code = 1000, reason = ""): Promise<{ code: number; reason: string }> {
    this.#userClosed = true;
    if (this.#ws.readyState <= 1) this.#ws.close(code, reason);
    return this.#final;
  }
}
