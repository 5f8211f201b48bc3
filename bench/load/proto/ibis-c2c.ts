/**
 * IBIS PLUG-IN POINT: Ibis's C2C over svc.v2 (spec §4.5). Fill in when the
 * transport and delivery engine land: `message` builds one MSG_C2C frame
 * (src/protocol/frame.ts encodeFrame) around a JSON or protobuf message whose
 * client id is rewritten per message; `sender` recognises C2C_SERVER_ACK,
 * `receiver` a MSG_C2C delivery vs a CLIENT_ACK_CONFIRM; `clientAck` builds
 * the MSG_C2S `CLIENT_ACK,C2C,<msg_id>,<did>` text (the msg id is in the
 * delivery). `extra` carries `{ tokens: [tokenA, tokenB][], users: [a, b][] }`
 * from bench/lib/ibis.ts.
 */
import type { C2cProto, ProtoParams } from "./c2c.ts";

export function ibisC2c(_p: ProtoParams): C2cProto {
  throw new Error("ibis C2C protocol not plugged in yet (bench/load/proto/ibis-c2c.ts)");
}
