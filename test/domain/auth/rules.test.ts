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

  test("device headers are trimmed and bounded", () => {
    expect(deviceOf(" d1 ", " ios ")).toEqual({ deviceId: "d1", deviceType: "ios" });
    expect(deviceOf(undefined, undefined)).toEqual({ deviceId: "", deviceType: "" });
    expect(deviceOf("x".repeat(500), "y".repeat(50))).toEqual({ deviceId: "x".repeat(128), deviceType: "y".repeat(32) });
  });
});
