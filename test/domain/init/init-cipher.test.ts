import { createDecipheriv, createHash } from "node:crypto";
import { describe, expect, test } from "bun:test";
import { decryptInit, encryptInit } from "../../../src/domain/init/init-cipher.ts";

/** The rule exactly as docs/auth.md states it, with node:crypto instead of the module's WebCrypto. */
function decryptAsDocumented(secret: string, res: string): string {
  const key = createHash("sha256").update(secret, "utf8").digest();
  const raw = Buffer.from(res, "base64");
  const decipher = createDecipheriv("aes-256-cbc", key, raw.subarray(0, 16));
  return Buffer.concat([decipher.update(raw.subarray(16)), decipher.final()]).toString("utf8");
}

describe("init encryption", () => {
  test("decrypts with the documented derivation; a fresh IV every time", async () => {
    const text = '{"ws_url":"ws://h/ws","ü":"✓"}';
    const a = await encryptInit("s3cret", text);
    const b = await encryptInit("s3cret", text);
    expect(a).not.toBe(b);
    expect(decryptAsDocumented("s3cret", a)).toBe(text);
    expect(await decryptInit("s3cret", b)).toBe(text);
    expect((Buffer.from(a, "base64").length - 16) % 16).toBe(0);
  });

  test("a wrong secret does not decrypt", async () => {
    const res = await encryptInit("right", "x".repeat(40));
    let out: string | undefined;
    try {
      out = decryptAsDocumented("wrong", res);
    } catch {
      out = undefined;
    }
    expect(out).not.toBe("x".repeat(40));
  });
});
