/**
 * Token expiry on open connections (spec §5.2, §6, §8): when a connection's
 * access token expires it gets S2C please_refresh_token and has
 * `tokenRefreshWindow` ms to present a fresh access token in a C2S
 * `refresh_token` message (docs/websocket.md); else it is closed with 4101.
 * One min-heap of connection deadlines per node, swept by one timer; no per-socket timer.
 */
import { VERDICT_REFUSAL, type SessionVerdict } from "../domain/auth/liveness.ts";
import type { TokenService } from "../domain/auth/tokens.ts";
import { CloseCode } from "./close-codes.ts";
import type { Conn } from "./conn.ts";

/** What the heap orders: each item is in it at most once, at `heapIndex` (-1 when out). */
export interface Deadlined {
  deadline: number;
  heapIndex: number;
}

/**
 * An intrusive binary min-heap on `deadline`: an item knows its position, so a
 * moved deadline is re-sifted and a closed connection is removed at once
 * (nothing is held until a stale deadline comes round).
 */
export class DeadlineHeap<T extends Deadlined> {
  readonly #a: T[] = [];

  get size(): number {
    return this.#a.length;
  }

  /** Inserts `item`, or moves it after its deadline changed. */
  schedule(item: T): void {
    if (item.heapIndex < 0) {
      item.heapIndex = this.#a.length;
      this.#a.push(item);
    }
    this.#up(item.heapIndex);
    this.#down(item.heapIndex);
  }

  remove(item: T): void {
    const i = item.heapIndex;
    if (i < 0) return;
    const last = this.#a.pop()!;
    item.heapIndex = -1;
    if (last === item) return;
    this.#a[i] = last;
    last.heapIndex = i;
    this.#up(i);
    this.#down(last.heapIndex);
  }

  /** Removes and returns the earliest item due at or before `now`. */
  popDue(now: number): T | undefined {
    const top = this.#a[0];
    if (top === undefined || top.deadline > now) return undefined;
    this.remove(top);
    return top;
  }

  #up(i: number): void {
    const a = this.#a;
    const item = a[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]!.deadline <= item.deadline) break;
      a[i] = a[p]!;
      a[i]!.heapIndex = i;
      i = p;
    }
    a[i] = item;
    item.heapIndex = i;
  }

  #down(i: number): void {
    const a = this.#a;
    const item = a[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= a.length) break;
      const c = l + 1 < a.length && a[l + 1]!.deadline < a[l]!.deadline ? l + 1 : l;
      if (a[c]!.deadline >= item.deadline) break;
      a[i] = a[c]!;
      a[i]!.heapIndex = i;
      i = c;
    }
    a[i] = item;
    item.heapIndex = i;
  }
}

export interface ExpiryActions {
  /** S2C please_refresh_token to this connection. */
  askRefresh(conn: Conn, windowMs: number): void;
}

export class ExpiryWatch {
  readonly #heap = new DeadlineHeap<Conn>();
  constructor(private readonly windowMs: number, private readonly actions: ExpiryActions) {}

  track(conn: Conn): void {
    this.#heap.schedule(conn);
  }

  /** A closed connection leaves the heap at once. */
  forget(conn: Conn): void {
    this.#heap.remove(conn);
  }

  get size(): number {
    return this.#heap.size;
  }

  /** Acts on every connection whose deadline passed: first the refresh request, then the close. */
  sweep(now: number): void {
    for (let conn = this.#heap.popDue(now); conn; conn = this.#heap.popDue(now)) {
      if (conn.closing) continue;
      if (!conn.refreshing) {
        conn.refreshing = true;
        conn.deadline = now + this.windowMs;
        this.track(conn);
        this.actions.askRefresh(conn, this.windowMs);
      } else {
        conn.close(CloseCode.TokenExpired, "token_expired");
      }
    }
  }

  /**
   * A fresh access token presented on `conn`: it must be an access token of
   * the same user, for the same device when it names one. Moves the expiry.
   */
  async refresh(
    conn: Conn,
    token: unknown,
    tokens: TokenService,
    check: (userId: bigint, sessionDeviceId: string, gen: number) => SessionVerdict | Promise<SessionVerdict>,
  ): Promise<{ ok: true; expiresAt: number } | { ok: false; msg: string }> {
    if (typeof token !== "string" || token === "") return { ok: false, msg: "payload.token missing" };
    const claims = await tokens.verify(token, "access");
    if (!claims.ok) return { ok: false, msg: claims.error.msg };
    const c = claims.value;
    if (c.userId !== conn.userId) return { ok: false, msg: "token belongs to another user" };
    if (c.deviceId !== "" && c.deviceId !== conn.deviceId) return { ok: false, msg: "device id does not match the token" };
    // Same session only: a socket does not move to another session's tokens (a cut matches it by its session).
    if (c.deviceId !== conn.sessionDeviceId) return { ok: false, msg: "token of another session" };
    const verdict = await check(c.userId, c.deviceId, c.gen);
    if (verdict !== "ok") return { ok: false, msg: VERDICT_REFUSAL[verdict][1] };
    if (conn.closing) return { ok: false, msg: "connection closed" };
    conn.gen = c.gen;
    conn.expiresAt = conn.deadline = c.expiresAt;
    conn.refreshing = false;
    this.track(conn);
    return { ok: true, expiresAt: c.expiresAt };
  }
}
