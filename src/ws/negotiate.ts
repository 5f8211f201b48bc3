/** Sub-protocol negotiation (spec §4.5): svc.v2 > svc-protobuf > svc-json > text. */

/** A connection's encoding, kept as a small integer on each connection. */
export const Proto = { V2: 0, Protobuf: 1, Json: 2, Text: 3 } as const;
export type ProtoValue = (typeof Proto)[keyof typeof Proto];

/** Names in priority order; index = Proto value. */
export const PROTOCOL_NAMES = ["svc.v2", "svc-protobuf", "svc-json", "text"] as const;
export type ProtocolName = (typeof PROTOCOL_NAMES)[number];

export type Negotiation =
  /** `answer` goes into Sec-WebSocket-Protocol; undefined → no header (nothing was offered). */
  | { readonly ok: true; readonly proto: ProtoValue; readonly answer: string | undefined }
  /**
   * Only unknown protocols offered: upgrade answering the client's first offer
   * (RFC 6455 lets the server pick any offered one; a client fails the
   * connection on none), then send the connection-level error and close.
   */
  | { readonly ok: false; readonly answer: string; readonly offered: readonly string[] };

/** Parses a Sec-WebSocket-Protocol request header (comma-separated tokens, case-sensitive). */
export function parseOffer(header: string | null | undefined): string[] {
  if (!header) return [];
  const out: string[] = [];
  for (const part of header.split(",")) {
    const token = part.trim();
    if (token) out.push(token);
  }
  return out;
}

/** The answer for each protocol, made once: a client offering exactly one known protocol (the usual case) parses nothing. */
const ONLY: ReadonlyMap<string, Negotiation> = new Map(PROTOCOL_NAMES.map((name, p) => [name, { ok: true, proto: p as ProtoValue, answer: name }]));

export function negotiate(header: string | null | undefined): Negotiation {
  const only = header ? ONLY.get(header) : undefined;
  if (only) return only;
  const offered = parseOffer(header);
  if (offered.length === 0) return { ok: true, proto: Proto.Json, answer: undefined };
  for (let p = 0; p < PROTOCOL_NAMES.length; p++) {
    const name = PROTOCOL_NAMES[p]!;
    if (offered.includes(name)) return { ok: true, proto: p as ProtoValue, answer: name };
  }
  return { ok: false, answer: offered[0]!, offered };
}
