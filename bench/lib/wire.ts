/**
 * Pre-built svc.v2 frames for load generators and raw baselines (spec §4.5
 * header: magic 0x4942, version 2, flags, type, uint32 length). Built once;
 * callers rewrite only the bytes that change (Seq, id) in place. This is not
 * Ibis's codec (src/protocol/frame.ts): the bench must not measure with the
 * code under test.
 */
export const HEADER = 9;
export const T = { PING: 0x01, PONG: 0x02, ACK: 0x03, ERROR: 0x06, C2C: 0x20, C2G: 0x21, C2S: 0x22, S2C: 0x23 } as const;

export function frame(type: number, flags: number, payloadLen: number, declaredLen = payloadLen): Uint8Array {
  const b = new Uint8Array(HEADER + payloadLen);
  b[0] = 0x49;
  b[1] = 0x42;
  b[2] = 2;
  b[3] = flags;
  b[4] = type;
  new DataView(b.buffer).setUint32(5, declaredLen);
  return b;
}

/** Ping with Seq at offset 9 (flags 0x27: ack requested, priority 7, as the spec's sample). */
export const pingFrame = (): Uint8Array => frame(T.PING, 0x27, 2);

export const setSeq = (b: Uint8Array, seq: number): void => {
  b[9] = (seq >>> 8) & 0xff;
  b[10] = seq & 0xff;
};
export const getSeq = (b: Uint8Array): number => (b[9]! << 8) | b[10]!;

/** 64-bit id at `off` as two uint32 halves (no bigint on the hot path). */
export function setId(view: DataView, off: number, id: number): void {
  view.setUint32(off, Math.floor(id / 2 ** 32));
  view.setUint32(off + 4, id >>> 0);
}
export function getId(b: Uint8Array, off: number): number {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return v.getUint32(off) * 2 ** 32 + v.getUint32(off + 4);
}
