import type { Server, WebSocketHandler } from "bun";
import type { Services } from "../services.ts";

export interface WsTransport {
  /** Handles GET /ws: upgrades (returns undefined) or answers with an HTTP error. */
  upgrade(req: Request, server: Server<unknown>): Promise<Response | undefined>;
  readonly websocket: WebSocketHandler<unknown>;
  /** Closes every socket (shutdown). */
  closeAll(code: number, reason: string): void;
}

/** Placeholder until the transport lands: /ws answers 501 in the pre-business shape. */
export function createWsTransport(_services: Services): WsTransport {
  return {
    upgrade: async () =>
      new Response(JSON.stringify({ code: 501, payload: { title: "not implemented", content: "websocket transport not built yet" }, server_ts: Date.now() }), {
        status: 501,
        headers: { "content-type": "application/json" },
      }),
    websocket: { message() {} },
    closeAll() {},
  };
}
