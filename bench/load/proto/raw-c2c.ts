/** The bare relay's C2C bytes (bench/baselines/c2c-relay.ts). */
import { frame, HEADER, setId, T } from "../../lib/wire.ts";
import type { C2cProto, ProtoParams } from "./c2c.ts";

export function rawC2c(p: ProtoParams): C2cProto {
  const msg = frame(T.C2C, 0, 8 + p.size);
  const msgView = new DataView(msg.buffer);
  const ack = frame(T.ACK, 0, 8);
  return {
    url: (pair, role) => `${p.base}/?pair=${pair}&role=${role}`,
    options: () => ({}),
    message(pair, n) {
      setId(msgView, HEADER, pair * 2 ** 24 + n);
      return msg;
    },
    sender: (r) => (typeof r !== "string" && r[4] === T.S2C ? "server_ack" : "other"),
    receiver: (r) => (typeof r === "string" ? "other" : r[4] === T.C2C ? "deliver" : r[4] === T.S2C ? "confirm" : "other"),
    clientAck(d) {
      ack.set((d as Uint8Array).subarray(HEADER, HEADER + 8), HEADER);
      return ack;
    },
  };
}
