/**
 * The few WebSocket bytes a raw-TCP client needs (RFC 6455): the upgrade
 * request, a client frame masked with the all-zero key (valid, and lets one
 * pre-built frame be written again and again), and a counter of server frames.
 */
export function upgradeRequest(host: string, path: string, headers: Record<string, string> = {}): Buffer {
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  return Buffer.from(
    `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
  );
}

/** A masked binary client frame (mask key 0: the payload goes out unchanged). */
export function clientFrame(payload: Uint8Array, opcode = 0x2): Buffer {
  const n = payload.length;
  const ext = n < 126 ? 0 : n < 65536 ? 2 : 8;
  const b = Buffer.alloc(2 + ext + 4 + n);
  b[0] = 0x80 | opcode;
  if (ext === 0) b[1] = 0x80 | n;
  else if (ext === 2) {
    b[1] = 0x80 | 126;
    b.writeUInt16BE(n, 2);
  } else {
    b[1] = 0x80 | 127;
    b.writeBigUInt64BE(BigInt(n), 2);
  }
  b.set(payload, 2 + ext + 4);
  return b;
}

/**
 * Counts complete server frames in a byte stream without copying payloads.
 * Feed every chunk after the HTTP response; returns frames completed by it.
 */
export class FrameCounter {
  private need = 0; // payload bytes still to skip
  private head: number[] = [];

  feed(chunk: Uint8Array, from = 0): number {
    let done = 0;
    let i = from;
    while (i < chunk.length) {
      if (this.need > 0) {
        const take = Math.min(this.need, chunk.length - i);
        this.need -= take;
        i += take;
        if (this.need === 0) done++;
        continue;
      }
      this.head.push(chunk[i++]!);
      const h = this.head;
      if (h.length < 2) continue;
      const len7 = h[1]! & 0x7f;
      const want = 2 + (len7 === 126 ? 2 : len7 === 127 ? 8 : 0);
      if (h.length < want) continue;
      let len = len7;
      if (len7 === 126) len = (h[2]! << 8) | h[3]!;
      else if (len7 === 127) len = h.slice(2, 10).reduce((a, x) => a * 256 + x, 0);
      this.head = [];
      if (len === 0) done++;
      else this.need = len;
    }
    return done;
  }
}
