import { describe, expect, test } from "bun:test";
import { checkAccount, checkNickname, checkPassword, deviceOf } from "../../../src/domain/auth/rules.ts";

describe("account rules", () => {
  test.each([
    ["alice", "alice"],
    ["  Alice@Example.com ", "alice@example.com"],
    ["a.b_c-d+e", "a.b_c-d+e"],
    ["abc", "abc"],
  ])("account %p → %p", (raw, want) => {
    expect(checkAccount(raw)).toEqual({ ok: true, value: want });
  });

  test.each([["ab"], [""], ["-alice"], ["al ice"], ["ålice"], ["a".repeat(65)]])("account %p refused", (raw) => {
    const r = checkAccount(raw);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.kind).toBe("bad_request");
  });

  test.each([
    ["12345", false],
    ["123456", true],
    ["x".repeat(128), true],
    ["x".repeat(129), false],
  ])("password of length %#: %p", (pwd, good) => {
    expect(checkPassword(pwd).ok).toBe(good);
  });

  test("nickname defaults to the account's local part and is bounded", () => {
    expect(checkNickname(undefined, "bob@example.com")).toEqual({ ok: true, value: "bob" });
    expect(checkNickname("  Bobby ", "bob")).toEqual({ ok: true, value: "Bobby" });
    expect(checkNickname("x".repeat(65), "bob").ok).toBe(false);
  });

  test("device headers are trimmed and checked like the WebSocket handshake's", () => {
    expect(deviceOf(" d1 ", " iOS ")).toEqual({ ok: true, value: { deviceId: "d1", deviceType: "ios" } });
    expect(deviceOf(undefined, undefined)).toEqual({ ok: true, value: { deviceId: "", deviceType: "" } });
    expect(deviceOf("x".repeat(128), "web").ok).toBe(true);
    for (const [id, type] of [["x".repeat(129), ""], ["a,b", ""], ["a b", ""], ["é", ""], ["d1", "toaster"]]) {
      expect(deviceOf(id, type)).toMatchObject({ ok: false, error: { kind: "bad_request" } });
    }
  });
});
