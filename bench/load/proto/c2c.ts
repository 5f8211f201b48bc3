/**
 * How a C2C load generator speaks to one kind of server. The generator owns
 * timing, windows and histograms; a protocol only builds frames once, rewrites
 * the bytes that change, and classifies replies. Both sides answer in order
 * per socket, so replies are matched by position, not by parsing ids.
 */
import type { OpenOptions } from "../common.ts";

export type SenderReply = "server_ack" | "other";
export type ReceiverReply = "deliver" | "confirm" | "other";

export interface C2cProto {
  url(pair: number, role: "a" | "b"): string;
  options(pair: number, role: "a" | "b"): OpenOptions;
  /** The next C2C message of `pair` (a pre-built buffer with its id rewritten). */
  message(pair: number, n: number): Uint8Array | string;
  sender(reply: Uint8Array | string): SenderReply;
  receiver(reply: Uint8Array | string): ReceiverReply;
  /** The CLIENT_ACK for a delivery (pre-built, id copied in). */
  clientAck(delivery: Uint8Array | string): Uint8Array | string;
}

export interface ProtoParams {
  /** ws://host:port of the server. */
  base: string;
  size: number;
  /** Per-pair auth etc.; opaque to the generator (Ibis: tokens of both users). */
  extra?: unknown;
}
