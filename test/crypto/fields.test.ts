import { describe, expect, test } from "bun:test";
import { FieldCipher } from "../../src/crypto/fields.ts";

describe("field cipher (IBIS_FIELD_KEY)", () => {
  test("opens what it sealed, only under the same key and column", async () => {
    const a = await FieldCipher.fromSecret("key one");
    const b = await FieldCipher.fromSecret("key two");
    const plain = new Uint8Array([1, 2, 3, 4]);
    const sealed = await a.seal("t.c", plain);
    expect(sealed.startsWith("f1.")).toBe(true);
    expect(await a.seal("t.c", plain)).not.toBe(sealed); // fresh nonce each time
    expect([...(await a.open("t.c", sealed))!]).toEqual([1, 2, 3, 4]);
    expect(await b.open("t.c", sealed)).toBeUndefined();
    expect(await a.open("t.other", sealed)).toBeUndefined();
    expect(await a.open("t.c", "f1.AAAA")).toBeUndefined();
    expect(await a.open("t.c", "plain text")).toBeUndefined();
  });

  test("an empty key is refused", async () => {
    await expect(FieldCipher.fromSecret("")).rejects.toThrow("field key is empty");
  });
});
