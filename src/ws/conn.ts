/**
 * One open WebSocket: the `ws.data` of every socket and the `Session` the
 * delivery engine sees. Kept small (a few fields, no closures, no timers):
 * timers are per node (heartbeat.ts, expiry.ts), per-user state lives in the hub.
 */
import type { ServerWebSocket } from "bun";
import type { Outbound, SendOutcome, Session } from "../delivery/ports.ts";
import { largeFrame, outboundJson, outboundProto, outboundV2Frame } from "../protocol/message.ts";
import { V2_TOPIC } from "./heartbeat.ts";
import { Proto, type ProtoValue } from "./negotiate.ts";

/** Shared by every connection of a transport (one pointer per socket). */
export interface ConnContext {
  /** Called once when a send was dropped past the backpressure limit (the socket is being closed). */
  onSlowConsumer(conn: Conn): void;
}

export interface ConnIdentity {
  readonly userId: bigint;
  readonly deviceId: string;
  readonly deviceType: string;
  /** Access-token expiry, ms. */
  readonly expiresAt: number;
  /** The device session the token belongs to (its `did`: this device, or "" for a device-less token). */
  readonly sessionDeviceId: string;
  /** The token's session generation (docs/auth.md "Revocation"). */
  readonly gen: number;
}

/** Connections with gathered frames, flushed together at the next microtask checkpoint. */
let dirty: Conn[] = [];

function flushDirty(): void {
  const conns = dirty;
  dirty = [];
  for (const c of conns) c.flush();
}

/** Only batches of small frames are corked: a single frame gains nothing from it, and uWS's cork buffer is 16 KiB. */
const CORK_FRAME_MAX = 16 * 1024;
// A string's UTF-8 may take up to three bytes per UTF-16 unit.
const small = (d: string | Uint8Array) => (typeof d === "string" ? d.length * 3 : d.length) <= CORK_FRAME_MAX;

/** Sends each frame in order; true when Bun dropped one (past the backpressure limit). */
function sendAll(ws: ServerWebSocket<Conn>, frames: readonly (string | Uint8Array)[]): boolean {
  for (const d of frames) if (ws.send(d) === 0) return true;
  return false;
}

/** The connection whose Bun `message` callback is running (Bun corks that socket itself). */
let handling: Conn | undefined;

/** Marks the start (conn) and end (undefined) of `conn`'s message callback: its own answers (pong, refusals) go at once. */
export function handlingMessageOf(conn: Conn | undefined): void {
  handling = conn;
}

export class Conn implements Session {
  /** Set in `open`; Bun creates the socket after the upgrade. */
  ws!: ServerWebSocket<Conn>;
  readonly userId: bigint;
  readonly deviceId: string;
  readonly deviceType: string;
  /** Current access-token expiry, ms (moved by a refresh). */
  expiresAt: number;
  /** Device session of the token (its `did`), and the token's generation: what a session cut matches (cut.ts). */
  readonly sessionDeviceId: string;
  gen: number;
  /** Next time the expiry sweep acts on this connection. */
  deadline: number;
  /** Position in the expiry heap (-1: not in it). */
  heapIndex = -1;
  /** Between please_refresh_token and a fresh token (or the close). */
  refreshing = false;
  /** No send after close() or the slow-consumer cut. */
  closing = false;
  /** Reached engine.onOpen (so engine.onClose is owed). */
  opened = false;
  /** When `open` ran (ms). */
  openedAt = 0;
  /** Uplinks that arrived while a large message of this connection was being scanned (src/ws/dispatch.ts), in order. */
  held: { readonly messages: (string | Uint8Array)[]; bytes: number } | undefined;
  /** Frames written since the last flush (see `write`); undefined when none. */
  #out: (string | Uint8Array)[] | undefined;

  constructor(
    readonly connId: number,
    id: ConnIdentity,
    /** Negotiated encoding, or -1 when only unknown protocols were offered. */
    readonly proto: ProtoValue | -1,
    readonly ctx: ConnContext,
    /** Connection-level error text to send after the upgrade (unsupported protocol). */
    readonly rejection?: string,
  ) {
    this.userId = id.userId;
    this.deviceId = id.deviceId;
    this.deviceType = id.deviceType;
    this.expiresAt = this.deadline = id.expiresAt;
    this.sessionDeviceId = id.sessionDeviceId;
    this.gen = id.gen;
  }

  /** Encodes for this connection's sub-protocol (once per Outbound and encoding) and sends. */
  send(out: Outbound): SendOutcome {
    if (this.closing) return "closed";
    switch (this.proto) {
      case Proto.V2: {
        const large = largeFrame(out, "v2");
        return large ? this.#writeNow(large) : this.write(outboundV2Frame(out));
      }
      case Proto.Protobuf: {
        const large = largeFrame(out, "pb");
        return large ? this.#writeNow(large) : this.write(outboundProto(out));
      }
      default:
        return this.write(outboundJson(out));
    }
  }

  /**
   * A frame in a buffer that is written again after this returns (a large
   * push, `largeFrame`): what this socket gathered goes first, then this
   * frame at once; Bun copies what the socket does not take.
   *
   * An svc.v2 socket leaves the heartbeat topic for the send: uWS writes a
   * large frame straight to the socket (the kernel takes megabytes of it)
   * only when the socket subscribes to nothing, and otherwise formats the
   * whole frame into fresh memory of its own first (16 MiB: 4,097 page faults
   * and 12–14 ms of the event loop, against 1,800–3,100 and 8–11 ms). Pings
   * published before are still delivered first; none can be published
   * between the two calls.
   */
  #writeNow(data: Uint8Array): SendOutcome {
    this.flush();
    if (this.closing) return "closed";
    if (this.proto !== Proto.V2) return this.#sendNow(data);
    this.ws.unsubscribe(V2_TOPIC);
    const sent = this.#sendNow(data);
    if (!this.closing) this.ws.subscribe(V2_TOPIC);
    return sent;
  }

  /**
   * Sends raw bytes (binary frame) or text (text frame). Outside the socket's
   * own message callback, frames are gathered per socket and written at the
   * next microtask checkpoint inside `ws.cork`:
   * most sends happen after a database commit or in async code, where Bun does
   * not cork, and a batch commit answers several messages of one socket at once
   * (one syscall for all of them instead of one each). Order per socket is kept.
   */
  write(data: string | Uint8Array): SendOutcome {
    if (this.closing) return "closed";
    // Inside this socket's own message callback Bun already corks: send now (ping → pong stays one step).
    if (this.#direct()) return this.#sendNow(data);
    if (this.#out) this.#out.push(data);
    else {
      this.#out = [data];
      dirty.push(this);
      if (dirty.length === 1) queueMicrotask(flushDirty);
    }
    return "sent";
  }

  /** `write` for a buffer the caller reuses after this returns: copied when it has to wait. */
  writeTransient(data: Uint8Array): SendOutcome {
    if (!this.closing && this.#direct()) return this.#sendNow(data); // Bun copies it now
    return this.write(data.slice());
  }

  /**
   * Writes what `write` gathered. Bun answers bytes written, -1 (queued under
   * backpressure) or 0 (dropped past the limit): a drop cuts the connection,
   * so nothing is ever lost silently.
   */
  flush(): void {
    const out = this.#out;
    if (!out) return;
    this.#out = undefined;
    if (this.closing) return;
    const ws = this.ws;
    const dropped = out.length > 1 && out.every(small) ? ws.cork(() => sendAll(ws, out)) : sendAll(ws, out);
    if (dropped) this.#cut();
  }

  /** Inside this socket's own message callback, nothing gathered before: Bun corks, the frame can go now. */
  #direct(): boolean {
    return handling === this && !this.#out;
  }

  /** Bun dropped a frame past the backpressure limit: the connection is cut, nothing is lost silently. */
  #cut(): void {
    this.closing = true;
    this.ctx.onSlowConsumer(this);
  }

  #sendNow(data: string | Uint8Array): SendOutcome {
    const n = this.ws.send(data);
    if (n > 0) return "sent";
    if (n === -1) return "queued";
    this.#cut();
    return "closed";
  }

  close(code: number, reason: string): void {
    if (this.closing) return;
    this.flush(); // what was written before the close goes first (e.g. logged_another_device, then 4103)
    this.closing = true;
    this.ws.close(code, reason);
  }
}
