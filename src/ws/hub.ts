/**
 * This node's open sessions (the `SessionRegistry` of delivery/ports.ts), by
 * user then device, plus the per-user state the transport keeps while a user
 * has sessions (the message token bucket).
 */
import type { Session, SessionRegistry } from "../delivery/ports.ts";
import type { Conn } from "./conn.ts";
import { fullBucket, type Bucket } from "./throttle.ts";

interface UserEntry {
  /** Copy-on-write: a caller iterating `sessionsOf` never sees it change under it (closes run synchronously). */
  sessions: readonly Conn[];
  readonly bucket: Bucket;
}

const NONE: readonly Session[] = Object.freeze([]);

export class Hub implements SessionRegistry {
  readonly #users = new Map<bigint, UserEntry>();
  #count = 0;

  /** Registers `conn`; returns the connection of the same user and device it replaces (takeover). */
  add(conn: Conn, burst: number, now: number): Conn | undefined {
    let entry = this.#users.get(conn.userId);
    if (!entry) {
      entry = { sessions: [conn], bucket: fullBucket(burst, now) };
      this.#users.set(conn.userId, entry);
      this.#count++;
      return undefined;
    }
    const old = entry.sessions.find((s) => s.deviceId === conn.deviceId);
    entry.sessions = [...entry.sessions.filter((s) => s !== old), conn];
    if (!old) this.#count++;
    return old;
  }

  /** Unregisters `conn` if it is still the registered one; true when it was. */
  remove(conn: Conn): boolean {
    const entry = this.#users.get(conn.userId);
    if (!entry || !entry.sessions.includes(conn)) return false;
    this.#count--;
    if (entry.sessions.length === 1) this.#users.delete(conn.userId);
    else entry.sessions = entry.sessions.filter((s) => s !== conn);
    return true;
  }

  sessionsOf(userId: bigint): readonly Session[] {
    return this.#users.get(userId)?.sessions ?? NONE;
  }

  session(userId: bigint, deviceId: string): Session | undefined {
    return this.#users.get(userId)?.sessions.find((s) => s.deviceId === deviceId);
  }

  /** The message token bucket of a connected user. */
  bucketOf(userId: bigint): Bucket | undefined {
    return this.#users.get(userId)?.bucket;
  }

  /** Open sessions on this node. */
  get size(): number {
    return this.#count;
  }

  *all(): IterableIterator<Conn> {
    for (const entry of this.#users.values()) yield* entry.sessions;
  }
}
