/**
 * The REST half of the SDK (docs/auth.md, docs/social.md, docs/delivery.md):
 * one `fetch` per call, the §2.1 envelope unwrapped, ids exact (the project
 * JSON codec), device headers, request signatures when the server has
 * IBIS_API_SIGNATURE on (docs/operations.md), and the access token refreshed
 * once on a token refusal with the call retried.
 */
import { parseJson, stringifyJson, utf8 } from "../protocol/json.ts";
import { signRequest } from "../protocol/signature.ts";
import type { DeviceType } from "./socket.ts";
import type { DeviceItem } from "../model/device.ts";

/** A signed-in device: what an app keeps (e.g. in localStorage) to resume without a password. */
export interface Session {
  readonly userId: bigint;
  readonly account: string;
  readonly nickname: string;
  readonly deviceId: string;
  token: string;
  refreshToken: string;
}

/**
 * A refused call: `code` is the envelope code (400, 401, 409, 940–943, …), `status` the HTTP status;
 * `title` is set for refusals before business handling (`unauthorized`, `signature_invalid`, …).
 */
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

export interface UserCard {
  readonly user_id: bigint;
  readonly nickname: string;
  readonly avatar: string;
  readonly account_type: number;
  readonly remark?: string;
}
export interface Group {
  readonly group_id: bigint;
  readonly owner_uid: bigint;
  readonly title: string;
  readonly member_count: number;
  readonly role: "owner" | "manager" | "member";
}
export interface GroupMember extends UserCard {
  readonly group_id: bigint;
  readonly role: Group["role"];
}
/** A §2.8 message as REST and the socket deliver it (ids exact: bigint above 2^53). */
export type WireMessage = Record<string, any>;
export interface Conversation {
  readonly conversation_id: bigint;
  readonly conversation_type: "c2c" | "c2g";
  readonly server_ts: number;
  readonly last_msg: WireMessage;
  readonly is_pinned: boolean;
}
export interface Profile {
  readonly user_id: bigint;
  readonly uid: bigint;
  readonly account: string;
  readonly nickname: string;
  readonly avatar: string;
  readonly signature: string;
  readonly account_type: number;
  readonly searchable_by: "everyone" | "account" | "nobody";
  readonly created_at: number;
  readonly updated_at: number;
}
/** One of my devices (the shared model). */
export type Device = DeviceItem;
export interface Paged<T> {
  readonly total: number;
  readonly page: number;
  readonly size: number;
  readonly list: T[];
}
export interface MessageList {
  readonly list: WireMessage[];
  readonly has_more: boolean;
}

export interface ApiOptions {
  /** Server base, e.g. `location.origin` or `http://127.0.0.1:8080`. */
  readonly url: string;
  /** Sent as X-Device-ID (sign-in registers the device and binds the tokens to it). */
  readonly deviceId?: string;
  readonly deviceType?: DeviceType;
  /** A bare access token to call with when there is no session. */
  readonly token?: string;
  /** The app id and key the server knows (IBIS_API_KEYS); unset: requests go unsigned. */
  readonly signing?: { readonly app: string; readonly key: string };
  /** Extra fetch options, e.g. `{ tls: { ca } }` for a private certificate authority (Bun). */
  readonly fetchInit?: RequestInit;
  /** A session kept from earlier (resume without a password). */
  readonly session?: Session;
  /** Called whenever the session changes (sign-in, token refresh, sign-out): persist it here. */
  readonly onSession?: (s: Session | undefined) => void;
}

type Params = Record<string, unknown>;

export class IbisApi {
  #session: Session | undefined;
  #refreshing: Promise<void> | undefined;
  #rsaKey: Promise<CryptoKey | undefined> | undefined;

  constructor(readonly opts: ApiOptions) {
    this.#session = opts.session;
  }

  get session(): Session | undefined {
    return this.#session;
  }

  #setSession(s: Session | undefined): void {
    this.#session = s;
    this.opts.onSession?.(s);
  }

  /** The access token calls carry: the session's, else the `token` option. */
  get token(): string | undefined {
    return this.#session?.token ?? this.opts.token;
  }

  /**
   * One call; the payload on code 0, else IbisApiError. GET sends `params` as
   * the query, other methods as a JSON body. A token refusal (401 `unauthorized`)
   * with a session refreshes the token once and retries.
   */
  async call<T = any>(method: string, path: string, params?: Params, retried = false): Promise<T> {
    const url = new URL(path, this.opts.url);
    const o = this.opts;
    const headers: Record<string, string> = {};
    if (o.deviceId) headers["x-device-id"] = o.deviceId;
    if (o.deviceType) headers["x-device-type"] = o.deviceType;
    let body: Uint8Array<ArrayBuffer> | undefined;
    if (method === "GET") {
      for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    } else if (params !== undefined) {
      body = utf8(stringifyJson(params)) as Uint8Array<ArrayBuffer>;
      headers["content-type"] = "application/json";
    }
    const token = this.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (o.signing) Object.assign(headers, await signRequest(o.signing, method, url.toString(), body ?? new Uint8Array()));
    const res = await fetch(url, { ...o.fetchInit, method, headers, body });
    let env: any;
    try {
      env = parseJson(await res.text());
    } catch {
      throw new IbisApiError(res.status, `HTTP ${res.status}: not a JSON answer`, res.status);
    }
    if (env.code === 0) return env.payload as T;
    // A refusal before business handling is the top-level {code, payload: {title, content}} shape, without `msg`.
    const title: string | undefined = env.msg === undefined ? env.payload?.title : undefined;
    if (title === "unauthorized" && this.#session && !retried && !path.includes("/passport/")) {
      await this.refresh();
      return this.call(method, path, params, true);
    }
    throw new IbisApiError(env.code ?? res.status, env.msg ?? env.payload?.content ?? `HTTP ${res.status}`, res.status, title);
  }

  async #signIn(path: string, account: string, pwd: string, nickname?: string): Promise<Session> {
    const key = await this.#loginKey();
    const sent = key ? { pwd: await wrapPassword(key, pwd), rsa_encrypt: true } : { pwd };
    const p: any = await this.call("POST", path, { account, nickname, ...sent });
    const s: Session = {
      userId: BigInt(p.user_id),
      account: p.account,
      nickname: p.nickname,
      deviceId: this.opts.deviceId ?? "",
      token: p.token,
      refreshToken: p.refreshtoken,
    };
    this.#setSession(s);
    return s;
  }

  /** The server's login key when its init announces RSA password wrapping (docs/auth.md); asked once. */
  #loginKey(): Promise<CryptoKey | undefined> {
    this.#rsaKey ??= this.call("GET", "/api/v1/app/init").then(
      (init) =>
        init.login_pwd_rsa_encrypt
          ? crypto.subtle.importKey("spki", pemBytes(init.login_rsa_pub_key), { name: "RSA-OAEP", hash: "SHA-256" }, false, ["encrypt"])
          : undefined,
      (e: unknown) => {
        this.#rsaKey = undefined; // ask again at the next sign-in
        throw e;
      },
    );
    return this.#rsaKey;
  }

  signup(account: string, pwd: string, nickname?: string): Promise<Session> {
    return this.#signIn("/api/v1/passport/signup", account, pwd, nickname);
  }
  login(account: string, pwd: string): Promise<Session> {
    return this.#signIn("/api/v1/passport/login", account, pwd);
  }
  /** Forgets the session locally only: its tokens stay valid until they expire (`logout()` ends them on the server). */
  signOut(): void {
    this.#setSession(undefined);
  }
  /** Logs this device out on the server (its tokens stop, its sockets close with 4104 on every node), then forgets it. */
  async logout(): Promise<void> {
    await this.call("POST", "/api/v1/passport/logout");
    this.#setSession(undefined);
  }

  /** A new token pair from the refresh token; concurrent callers share one refresh. A refused refresh signs out. */
  refresh(): Promise<void> {
    this.#refreshing ??= (async () => {
      const s = this.#session;
      if (!s) throw new IbisApiError(401, "not signed in", 401);
      try {
        const p: any = await this.call("POST", "/api/v1/passport/refreshtoken", { refreshtoken: s.refreshToken });
        this.#setSession({ ...s, token: p.token, refreshToken: p.refreshtoken });
      } catch (e) {
        if (e instanceof IbisApiError && e.code === 401) this.#setSession(undefined);
        throw e;
      }
    })().finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  // ---- profile, people, devices (docs/accounts.md) ----------------------------
  profile(): Promise<Profile> {
    return this.call("GET", "/api/v1/user/profile");
  }
  updateProfile(patch: Partial<Pick<Profile, "nickname" | "avatar" | "signature" | "searchable_by">>): Promise<Profile> {
    return this.call("POST", "/api/v1/user/profile/update", patch);
  }
  /** Another user's card: the stranger view, or the friend view with account and signature. */
  userInfo(userId: bigint): Promise<UserCard & { is_friend: boolean; account?: string; signature?: string }> {
    return this.call("GET", "/api/v1/user/info", { user_id: userId });
  }
  searchPeople(keyword: string, page = 1, size = 20): Promise<Paged<UserCard & { is_friend: boolean; matched: "account" | "nickname" }>> {
    return this.call("GET", "/api/v1/user/search", { keyword, page, size });
  }
  async devices(): Promise<Device[]> {
    return (await this.call("GET", "/api/v1/user/device/list")).list;
  }
  renameDevice(deviceId: string, name: string): Promise<{ device_id: string; name: string }> {
    return this.call("POST", "/api/v1/user/device/rename", { device_id: deviceId, name });
  }
  /** Signs another of my devices out: its tokens stop, its sockets close (4104), my other devices hear device_signed_out. */
  signOutDevice(deviceId: string): Promise<unknown> {
    return this.call("POST", "/api/v1/user/device/signout", { device_id: deviceId });
  }

  // ---- friends ---------------------------------------------------------------
  addFriend(to: bigint, payload?: Params): Promise<UserCard & { status: string }> {
    return this.call("POST", "/api/v1/friend/add", { to, payload });
  }
  confirmFriend(from: bigint): Promise<UserCard> {
    return this.call("POST", "/api/v1/friend/confirm", { from });
  }
  rejectFriend(from: bigint): Promise<unknown> {
    return this.call("POST", "/api/v1/friend/reject", { from });
  }
  async friends(): Promise<UserCard[]> {
    return (await this.call("GET", "/api/v1/friend/list")).list;
  }

  // ---- groups ----------------------------------------------------------------
  async createGroup(title: string, memberIds: readonly bigint[]): Promise<Group> {
    return (await this.call("POST", "/api/v1/group/add", { title, member_uids: memberIds })).group;
  }
  /** Groups the caller owns (`owner`), is in without owning (`join`), or manages (`manager`). */
  groups(attr: "owner" | "join" | "manager", page = 1, size = 100): Promise<Paged<Group>> {
    return this.call("GET", "/api/v1/group/page", { attr, page, size });
  }
  members(gid: bigint, page = 1, size = 100): Promise<Paged<GroupMember>> {
    return this.call("GET", "/api/v1/group_member/page", { gid, page, size });
  }

  // ---- conversations and messages ----------------------------------------------
  /** The conversation list (§2.3), pinned first then newest first; `since` = only newer than that server_ts. */
  conversations(since?: number): Promise<Conversation[]> {
    return this.call("GET", "/api/v1/conversation/mine", { last_server_ts: since });
  }
  /** Newest first; `beforeId` = the §2.8 id of the oldest message held. */
  history(chatType: "c2c" | "c2g", peerId: bigint, beforeId?: string, limit = 50): Promise<MessageList> {
    return this.call("GET", "/api/v1/msg/history", { chat_type: chatType, peer_id: peerId, before_id: beforeId, limit });
  }
  /** This device's pending messages, oldest first. */
  offline(limit = 100): Promise<MessageList> {
    return this.call("GET", "/api/v1/msg/offline", { limit });
  }
  offlineAck(ids: readonly string[]): Promise<{ success: string[]; failed: { id: string; error: string }[] }> {
    return this.call("POST", "/api/v1/msg/offline_ack", { msg_ids: ids });
  }
  /** Read sync: the caller's other devices get S2C message_read_sync. */
  read(peerId: bigint, msgId: string): Promise<unknown> {
    return this.call("POST", "/api/v1/msg/read", { peer_id: peerId, msg_id: msgId });
  }
}

/** RSA-OAEP with SHA-256, Base64 of the ciphertext. */
async function wrapPassword(key: CryptoKey, pwd: string): Promise<string> {
  const wrapped = new Uint8Array(await crypto.subtle.encrypt({ name: "RSA-OAEP" }, key, new TextEncoder().encode(pwd)));
  return btoa(String.fromCharCode(...wrapped));
}

function pemBytes(pem: string): Uint8Array<ArrayBuffer> {
  const b64 = pem.replace(/-----[^-]+-----|\s/g, "");
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}
