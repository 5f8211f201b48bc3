import { describe, expect, test } from "bun:test";
import { clientFrame, FrameCounter } from "./wsraw.ts";

/** An unmasked server frame of `n` payload bytes. */
function serverFrame(n: number): Uint8Array {
  const ext = n < 126 ? 0 : n < 65536 ? 2 : 8;
  const b = Buffer.alloc(2 + ext + n);
  b[0] = 0x82;
  if (ext === 0) b[1] = n;
  else if (ext === 2) (b[1] = 126), b.writeUInt16BE(n, 2);
  else (b[1] = 127), b.writeBigUInt64BE(BigInt(n), 2);
  return b;
}

describe("FrameCounter", () => {
  test("counts frames of every length form, fed one byte at a time", () => {
    const stream = Buffer.concat([serverFrame(0), serverFrame(5), serverFrame(300), serverFrame(70_000)]);
    const c = new FrameCounter();
    let n = 0;
    for (let i = 0; i < stream.length; i++) n += c.feed(stream.subarray(i, i + 1));
    expect(n).toBe(4);
  });

  test("counts from an offset (bytes after the HTTP response)", () => {
    const head = Buffer.from("HTTP/1.1 101 OK\r\n\r\n");
    const chunk = Buffer.concat([head, serverFrame(3), serverFrame(3)]);
    expect(new FrameCounter().feed(chunk, head.length)).toBe(2);
  });
});

describe("clientFrame", () => {
  test("masked with the zero key, payload unchanged", () => {
    const f = clientFrame(new Uint8Array([1, 2, 3]));
    expect([...f]).toEqual([0x82, 0x83, 0, 0, 0, 0, 1, 2, 3]);
    expect(clientFrame(new Uint8Array(200))[1]).toBe(0x80 | 126);
  });
});
