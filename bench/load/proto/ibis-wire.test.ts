import { describe, expect, test } from "bun:test";
import { FRAME_HEADER_SIZE } from "../../../src/protocol/frame.ts";
import { messageFrame } from "./ibis-wire.ts";

const TSID = "1152921504606846976";
const json = (f: Uint8Array) => JSON.parse(new TextDecoder().decode(f.subarray(FRAME_HEADER_SIZE))) as { id: string; payload: { text: string } };

describe("messageFrame", () => {
  test("x fill: the text is x repeated, the id counts up from the tsid", () => {
    const next = messageFrame("C2C", "1", "2", 1000, TSID);
    const m = json(next(7));
    expect(m.payload.text).toBe("x".repeat(1000));
    expect(m.id.split(".")[1]).toBe((BigInt(TSID) + 7n).toString());
  });

  // bench/limit.ts --payload random: what PostgreSQL cannot compress, as an E2EE ciphertext.
  test("random fill: Base64 of the asked length, different per frame, valid JSON", () => {
    const a = json(messageFrame("C2C", "1", "2", 100_003, TSID, "random")(0)).payload.text;
    const b = json(messageFrame("C2C", "1", "2", 100_003, TSID, "random")(0)).payload.text;
    expect(a).toHaveLength(100_003);
    expect(a).toMatch(/^[A-Za-z0-9+/]+$/);
    expect(a).not.toBe(b);
    expect(new Set(a).size).toBeGreaterThan(60); // not a repeated character: every Base64 letter appears
  });
});
