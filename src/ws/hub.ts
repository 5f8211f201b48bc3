/**
 * This node's open sessions (the `SessionRegistry` of delivery/ports.ts), by
 * user then device. Memory per idle user: one map entry and its session
 * array (the per-user throttles live apart: throttle.ts `UserThrottles`).
 */
import type { Session, SessionRegistry } from "../delivery/ports.ts";
import type { Conn } from "./conn.ts";

const NONE: readonly Session[] = Object.freeze([]);

export class Hub implements SessionRegistry {
  /** Copy-on-write arrays: a caller iterating `sessionsOf` never sees one change under it (closes run synchronously). */
  readonly #users = new Map<bigint, readonly Conn[]>();
  #count = 0;

  /** Registers `conn`; returns the connection of the same user and device it replaces (takeover). */
  add(conn: Conn): Conn | undefined {
    const sessions = this.#users.get(conn.userId);
    if (!sessions) {
      this.#users.set(conn.userId, [conn]);
      this.#count++;
      return undefined;
    }
    const old = sessions.find((s) => s.deviceId === conn.deviceId);
    this.#users.set(conn.userId, [...sessions.filter((s) => s !== old), conn]);
    if (!old) this.#count++;
    return old;
  }

  /** Unregisters `conn` if it is still the registered one; true when it was. */
  remove(conn: Conn): boolean {
    const sessions = this.#users.get(conn.userId);
    if (!sessions || !sessions.includes(conn)) return false;
    this.#count--;
    if (sessions.length === 1) this.#users.delete(conn.userId);
    else this.#users.set(conn.userId, sessions.filter((s) => s !== conn));
    return true;
  }

  sessionsOf(userId: bigint): readonly Session[] {
    return this.#users.get(userId) ?? NONE;
  }

  session(userId: bigint, deviceId: string): Session | undefined {
    return this.#users.get(userId)?.find((s) => s.deviceId === deviceId);
  }

  /** Users with at least one session here. */
  users(): IterableIterator<bigint> {
    return this.#users.keys();
  }

  get userCount(): number {
    return this.#users.size;
  }

  /** Open sessions on this node. */
  get size(): number {
    return this.#count;
  }

  *all(): IterableIterator<Conn> {
    for (const sessions of this.#users.values()) yield* sessions;
  }
}
