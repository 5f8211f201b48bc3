/**
 * The Ibis client SDK as published (`ibis/client`, docs/client.md): the
 * app-facing client, REST calls, the WebSocket transport without protobuf
 * encoders, and the shared model. Bundles for browsers and Bun.
 */
export { IbisClient, IbisSendError, type ClientEvents, type ClientOptions, type ConnectionState, type Sending, type StateChange } from "./client.ts";
export {
  IbisApi,
  IbisApiError,
  type ApiOptions,
  type Conversation,
  type Group,
  type GroupMember,
  type MessageList,
  type Paged,
  type Session,
  type UserCard,
  type WireMessage,
} from "./rest.ts";
export {
  IbisSocket,
  newMessageId,
  wsUrl,
  type AckForm,
  type ConnectOptions,
  type DeviceType,
  type SocketAckForm,
  type SubProtocolName,
} from "./socket.ts";
export { decodeBinary, decodeText, type Incoming } from "./incoming.ts";
export { backoffBase, backoffDelay, BACKOFF_MAX_MS, BACKOFF_STEPS_MS } from "./backoff.ts";
export { CloseCode, mayReconnect, type CloseCodeValue } from "../model/close-codes.ts";
export type { ChatType, E2eeMeta, ImMessage } from "../model/message.ts";
