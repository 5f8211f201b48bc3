/** The shared model (message, ack, chat type, E2EE meta, close codes): imports nothing of the server. */
export { Outbound, type ChatType, type ClientAck, type E2eeMeta, type ImMessage } from "./message.ts";
export { CloseCode, mayReconnect, type CloseCodeValue } from "./close-codes.ts";
export type { DeviceItem } from "./device.ts";
