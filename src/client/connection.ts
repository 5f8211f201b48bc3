/**
 * `IbisSocket` plus the protobuf forms: messages as protobuf (bare on
 * svc-protobuf, inside MSG frames on svc.v2) and the protobuf ClientAck. The
 * transport tests and bench use it to cover every encoding; apps use
 * IbisClient, whose socket has no protobuf encoder (smaller browser bundle).
 */
import type { ChatType, ImMessage } from "../model/message.ts";
import { FrameType } from "../protocol/frame.ts";
import { clientAckProto, messageProto, msgFrameType } from "../protocol/message.ts";
import { IbisSocket, type AckForm } from "./socket.ts";

export { newMessageId, wsUrl, type AckForm, type ConnectOptions, type DeviceType, type SubProtocolName } from "./socket.ts";

export class IbisConnection extends IbisSocket {
  /**
   * Sends a business message in this connection's encoding. On binary
   * sub-protocols `encoding` picks protobuf (default) or UTF-8 JSON inside.
   */
  override send(msg: ImMessage, encoding: "protobuf" | "json" = "protobuf"): void {
    if (encoding === "protobuf" && this.#binary) this.sendBinary(msgFrameType(msg.type), messageProto(msg));
    else super.send(msg);
  }

  /** Business acknowledgement in one of its three forms (frame: svc.v2 only; protobuf on a text connection goes binary). */
  override ack(ack: { type: ChatType; msgId: string }, form: AckForm = "text"): void {
    if (form !== "protobuf") return super.ack(ack, form);
    const body = clientAckProto({ ...ack, did: this.opts.deviceId });
    if (this.#binary) this.sendBinary(FrameType.MsgC2S, body);
    else this.sendRaw(body);
  }

  get #binary(): boolean {
    return this.protocol === "svc.v2" || this.protocol === "svc-protobuf";
  }
}
