/** Ibis client SDK: the WebSocket transport (spec §4.5, §8) and the REST client (envelope, signatures). */
export { IbisConnection, newMessageId, wsUrl, type AckForm, type ConnectOptions, type DeviceType, type SubProtocolName } from "./connection.ts";
export { decodeBinary, decodeText, type Incoming } from "./incoming.ts";
export { backoffBase, backoffDelay, BACKOFF_MAX_MS, BACKOFF_STEPS_MS } from "./backoff.ts";
export { CloseCode, mayReconnect } from "../model/close-codes.ts";
export { IbisApi, IbisApiError, type ApiOptions, type Session } from "./rest.ts";
