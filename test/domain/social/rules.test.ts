import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../../src/config/index.ts";
import { TtlCache } from "../../../src/domain/social/cache.ts";
import { assistantsFromConfig, presencePayload } from "../../../src/domain/social/index.ts";
import { idList, pickId } from "../../../src/domain/social/input.ts";
import {
  can,
  conversationType,
  groupAttr,
  mentionTargets,
  mergeConversations,
  type ConversationState,
  type ConversationType,
  type GroupAttr,
  type GroupAction,
  type GroupRole,
} from "../../../src/domain/social/rules.ts";

describe("group role permissions", () => {
  const table: [GroupRole | undefined, GroupAction, boolean][] = [
    ["owner", "read", true], ["manager", "read", true], ["member", "read", true], [undefined, "read", false],
    ["owner", "invite", true], ["manager", "invite", true], ["member", "invite", true], [undefined, "invite", false],
    ["owner", "edit", true], ["manager", "edit", true], ["member", "edit", false], [undefined, "edit", false],
    ["owner", "set_role", true], ["manager", "set_role", false], ["member", "set_role", false],
    ["owner", "dissolve", true], ["manager", "dissolve", false], ["member", "dissolve", false], [undefined, "dissolve", false],
    ["owner", "leave", false], ["manager", "leave", true], ["member", "leave", true], [undefined, "leave", false],
  ];
  for (const [role, action, allowed] of table) {
    test(`${role ?? "non-member"} ${allowed ? "may" : "may not"} ${action}`, () => {
      expect(can(role, action)).toBe(allowed);
    });
  }
});

describe("group/page attr", () => {
  const table: [unknown, GroupAttr][] = [
    ["owner", "owner"], ["join", "join"], ["manager", "manager"],
    [undefined, "owner"], ["", "owner"], ["JOIN", "owner"], ["admin", "owner"], [1, "owner"],
  ];
  for (const [input, want] of table) test(`${String(input)} → ${want}`, () => expect(groupAttr(input)).toBe(want));
});

describe("conversation type", () => {
  const table: [unknown, ConversationType | undefined][] = [["c2c", "c2c"], ["C2G", "c2g"], ["c2s", undefined], [1, undefined]];
  for (const [input, want] of table) test(`${String(input)} → ${want}`, () => expect(conversationType(input)).toBe(want));
});

describe("mergeConversations", () => {
  const c = (type: "c2c" | "c2g", id: bigint, ts: number, tag = "") => ({ conversation_type: type, conversation_id: id, server_ts: ts, tag });
  const states = (entries: [string, ConversationState][]) => new Map(entries);
  const cases: { name: string; input: ReturnType<typeof c>[]; states?: [string, ConversationState][]; since?: number; want: string[] }[] = [
    { name: "empty", input: [], want: [] },
    { name: "newest first", input: [c("c2c", 1n, 10, "a"), c("c2g", 2n, 30, "b"), c("c2c", 3n, 20, "c")], want: ["b", "c", "a"] },
    { name: "newest server_ts wins per conversation", input: [c("c2c", 1n, 10, "old"), c("c2c", 1n, 50, "new"), c("c2c", 1n, 20, "mid")], want: ["new"] },
    { name: "c2c and c2g with the same id stay apart", input: [c("c2c", 7n, 10, "u"), c("c2g", 7n, 20, "g")], want: ["g", "u"] },
    { name: "pinned first", input: [c("c2c", 1n, 10, "p"), c("c2c", 2n, 20, "n")], states: [["c2c:1", { isPinned: true, deletedTs: null }]], want: ["p", "n"] },
    { name: "deleted up to its newest message: hidden", input: [c("c2c", 1n, 10, "d"), c("c2c", 2n, 5, "k")], states: [["c2c:1", { isPinned: false, deletedTs: 10 }]], want: ["k"] },
    { name: "a message after the deletion brings it back", input: [c("c2c", 1n, 11, "back")], states: [["c2c:1", { isPinned: false, deletedTs: 10 }]], want: ["back"] },
    { name: "since is strictly newer", input: [c("c2c", 1n, 10, "eq"), c("c2c", 2n, 11, "gt")], since: 10, want: ["gt"] },
    { name: "ties ordered by id", input: [c("c2c", 9n, 10, "nine"), c("c2g", 3n, 10, "three")], want: ["three", "nine"] },
  ];
  for (const k of cases) {
    test(k.name, () => {
      const out = mergeConversations(k.input, states(k.states ?? []), k.since);
      expect(out.map((o) => o.tag)).toEqual(k.want);
    });
  }
  test("is_pinned is set on every item", () => {
    const out = mergeConversations([c("c2c", 1n, 1), c("c2g", 2n, 2)], states([["c2g:2", { isPinned: true, deletedTs: null }]]));
    expect(out.map((o) => o.is_pinned)).toEqual([true, false]);
  });
});

describe("mentionTargets", () => {
  const members = new Set([1n, 2n, 3n]);
  const table: [bigint[], bigint, bigint[]][] = [
    [[2n, 3n], 1n, [2n, 3n]],
    [[2n, 2n, 9n], 1n, [2n]],
    [[1n, 2n], 1n, [2n]],
    [[], 1n, []],
    [[9n], 1n, []],
  ];
  for (const [at, sender, want] of table) test(`${at} from ${sender} → ${want}`, () => expect(mentionTargets(at, members, sender)).toEqual(want));
});

describe("id inputs", () => {
  test("pickId takes the first alias present; null when malformed", () => {
    expect(pickId({ group_id: "12" }, "gid", "group_id")).toBe(12n);
    expect(pickId({ gid: 5, group_id: 6 }, "gid", "group_id")).toBe(5n);
    expect(pickId({ gid: "" }, "gid")).toBeUndefined();
    expect(pickId({ gid: "x" }, "gid")).toBeNull();
    expect(pickId({ gid: 2 ** 60 }, "gid")).toBeNull(); // an unsafe number has lost precision
    expect(pickId({ gid: 2n ** 60n }, "gid")).toBe(2n ** 60n);
  });
  const table: [unknown, bigint[] | null][] = [
    [undefined, []], ["", []], [[1, "2", 3n], [1n, 2n, 3n]], ["4,5", [4n, 5n]], [7, [7n]], [[1, "x"], null], [[-1], null],
  ];
  for (const [input, want] of table) test(`idList(${String(input)})`, () => expect(idList(input)).toEqual(want));
});

describe("TtlCache", () => {
  test("expires after the ttl, evicts the oldest past max, keeps nothing at ttl 0", () => {
    let now = 0;
    const cache = new TtlCache<string, number | null>(100, 2, () => now);
    cache.set("a", null);
    expect(cache.get("a")?.value).toBeNull();
    now = 99;
    expect(cache.get("a")?.value).toBeNull();
    now = 100;
    expect(cache.get("a")).toBeUndefined();
    cache.set("x", 1);
    cache.set("y", 2);
    cache.set("z", 3);
    expect([cache.get("x"), cache.get("y")?.value, cache.get("z")?.value]).toEqual([undefined, 2, 3]);
    cache.delete("y");
    expect(cache.size).toBe(1);
    const off = new TtlCache<string, number>(0, 10, () => now);
    off.set("a", 1);
    expect(off.get("a")).toBeUndefined();
  });
});

describe("assistants config and presence payload", () => {
  test("IBIS_ASSISTANTS: empty → none; valid → specs with defaults; malformed → ConfigError naming the variable", () => {
    expect(assistantsFromConfig("")).toEqual([]);
    expect(assistantsFromConfig('[{"account":"a"}]')).toEqual([{ account: "a", nickname: "", avatar: "", description: "" }]);
    for (const bad of ["{", '{"account":"a"}', '[{"nickname":"x"}]', '[{"account":""}]']) {
      expect(() => assistantsFromConfig(bad)).toThrow(ConfigError);
      expect(() => assistantsFromConfig(bad)).toThrow("IBIS_ASSISTANTS");
    }
  });
  test("presence payload carries both id keys, exact", () => {
    expect(presencePayload(2n ** 62n)).toEqual({ user_id: 2n ** 62n, uid: 2n ** 62n });
  });
});
