/**
 * The SDK's REST side: the envelope (spec §2.1) through the project JSON
 * codec (ids stay exact), the bearer token, device headers and, when the
 * server has IBIS_API_SIGNATURE on, request signatures (docs/operations.md).
 */
import { parseJson, stringifyJson, utf8 } from "../protocol/json.ts";
import { signRequest } from "../protocol/signature.ts";

export interface ApiOptions {
  /** Server base, http(s)://host:port. */
  readonly url: string;
  readonly token?: string;
  readonly deviceId?: string;
  readonly deviceType?: string;
  /** The app id and key the server knows (IBIS_API_KEYS); unset: requests go unsigned. */
  readonly signing?: { readonly app: string; readonly key: string };
  /** Extra fetch options, e.g. `{ tls: { ca } }` for a private certificate authority. */
  readonly fetchInit?: RequestInit;
}

/** A non-zero envelope code, or a refusal before business handling (`title` set). */
export class IbisApiError extends Error {
  override readonly name = "IbisApiError";
  constructor(
    readonly code: number,
    message: string,
    readonly status: number,
    readonly title?: string,
  ) {
    super(message);
  }
}

export interface Session {
  readonly user_id: bigint;
  readonly token: string;
  readonly refreshtoken: string;
  readonly nickname: string;
  readonly account: string;
}

export class IbisApi {
  token: string | undefined;
  /** The session's current refresh token (set by signup, login and refresh; each works once: docs/auth.md). */
  refreshtoken: string | undefined;
  #refreshing: Promise<{ token: string; refreshtoken: string }> | undefined;

  constructor(private readonly opts: ApiOptions) {
    this.token = opts.token;
  }

  /** Calls `path` and answers the envelope's payload; throws IbisApiError unless code is 0. */
  async call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    const url = new URL(path, this.opts.url).toString();
    const bytes = body === undefined ? new Uint8Array() : utf8(stringifyJson(body));
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (this.opts.deviceId) headers["x-device-id"] = this.opts.deviceId;
    if (this.opts.deviceType) headers["x-device-type"] = this.opts.deviceType;
    if (this.opts.signing) Object.assign(headers, await signRequest(this.opts.signing, method, url, bytes));
    const res = await fetch(url, { ...this.opts.fetchInit, method, headers, body: body === undefined ? undefined : bytes });
    const text = await res.text();
    let answer: { code?: number; msg?: string; payload?: { title?: string; content?: string } & Record<string, unknown> };
    try {
      answer = parseJson(text) as typeof answer;
    } catch {
      throw new IbisApiError(res.status, `HTTP ${res.status}: not a JSON answer`, res.status);
    }
    if (answer.code === 0) return answer.payload as T;
    const title = answer.msg === undefined ? answer.payload?.title : undefined;
    const message = answer.msg ?? answer.payload?.content ?? `HTTP ${res.status}`;
    throw new IbisApiError(answer.code ?? res.status, message, res.status, title);
  }

  /** Signs up and keeps the new access token for the next calls. */
  async signup(account: string, pwd: string, nickname?: string): Promise<Session> {
    return this.#keep(await this.call<Session>("POST", "/api/v1/passport/signup", { account, pwd, nickname }));
  }

  async login(account: string, pwd: string): Promise<Session> {
    return this.#keep(await this.call<Session>("POST", "/api/v1/passport/login", { account, pwd }));
  }

  /**
   * Rotates the tokens with the kept refresh token. One refresh at a time:
   * callers arriving while one is in flight share it, since presenting a
   * refresh token twice is reuse and revokes the session (docs/auth.md).
   */
  refresh(): Promise<{ token: string; refreshtoken: string }> {
    this.#refreshing ??= this.call<{ token: string; refreshtoken: string }>("POST", "/api/v1/passport/refreshtoken", { refreshtoken: this.refreshtoken ?? "" })
      .then((pair) => this.#keep(pair))
      .finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  /** Logs this device out: its tokens stop working and its sockets close (4104) on every node. */
  async logout(): Promise<void> {
    await this.call("POST", "/api/v1/passport/logout");
    this.token = this.refreshtoken = undefined;
  }

  #keep<T extends { token: string; refreshtoken: string }>(s: T): T {
    this.token = s.token;
    this.refreshtoken = s.refreshtoken;
    return s;
  }
}
