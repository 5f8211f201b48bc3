/**
 * Token expiry on open connections (spec §5.2, §6, §8): when a connection's
 * access token expires it gets S2C please_refresh_token and has
 * `tokenRefreshWindow` ms to present a fresh access token in a C2S
 * `refresh_token` message (docs/websocket.md); else it is closed with 4101.
 * One min-heap of deadlines per node, swept by one timer; no per-socket timer.
 */
import type { TokenService } from "../domain/auth/tokens.ts";
import { CloseCode } from "./close-codes.ts";
import type { Conn } from "./conn.ts";

interface Entry {
  readonly at: number;
  readonly conn: Conn;
}

/** A binary min-heap of (deadline, connection). Stale entries are skipped when popped. */
export class DeadlineHeap {
  readonly #a: Entry[] = [];

  get size(): number {
    return this.#a.length;
  }

  push(at: number, conn: Conn): void {
    const a = this.#a;
    const e: Entry = { at, conn };
    let i = a.length;
    a.push(e);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]!.at <= at) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = e;
  }

  /** Pops the earliest entry due at or before `now`. */
  popDue(now: number): Entry | undefined {
    const a = this.#a;
    if (a.length === 0 || a[0]!.at > now) return undefined;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const c = l + 1 < a.length && a[l + 1]!.at < a[l]!.at ? l + 1 : l;
        if (a[c]!.at >= last.at) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

export interface ExpiryActions {
  /** S2C please_refresh_token to this connection. */
  askRefresh(conn: Conn, windowMs: number): void;
}

export class ExpiryWatch {
  readonly #heap = new DeadlineHeap();
  constructor(private readonly windowMs: number, private readonly actions: ExpiryActions) {}

  track(conn: Conn): void {
    this.#heap.push(conn.deadline, conn);
  }

  /** Acts on every connection whose deadline passed: first the refresh request, then the close. */
  sweep(now: number): void {
    for (let e = this.#heap.popDue(now); e; e = this.#heap.popDue(now)) {
      const conn = e.conn;
      if (conn.closing || e.at !== conn.deadline) continue; // closed, or refreshed since
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
  async refresh(conn: Conn, token: unknown, tokens: TokenService): Promise<{ ok: true; expiresAt: number } | { ok: false; msg: string }> {
    if (typeof token !== "string" || token === "") return { ok: false, msg: "payload.token missing" };
    const claims = await tokens.verify(token, "access");
    if (!claims.ok) return { ok: false, msg: claims.error.msg };
    const c = claims.value;
    if (c.userId !== conn.userId) return { ok: false, msg: "token belongs to another user" };
    if (c.deviceId !== "" && c.deviceId !== conn.deviceId) return { ok: false, msg: "device id does not match the token" };
    if (conn.closing) return { ok: false, msg: "connection closed" };
    conn.expiresAt = conn.deadline = c.expiresAt;
    conn.refreshing = false;
    this.track(conn);
    return { ok: true, expiresAt: c.expiresAt };
  }
}
