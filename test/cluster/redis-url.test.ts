import { expect, test } from "bun:test";
import { redisUrlOptions } from "../../src/cluster/redis.ts";

test.each([
  ["redis://127.0.0.1:6379", { host: "127.0.0.1", port: 6379 }],
  ["redis://cache", { host: "cache", port: 6379 }],
  ["redis://:p%40ss@h:7000/2", { host: "h", port: 7000, password: "p@ss", db: 2 }],
  ["redis://user:pw@h/0", { host: "h", port: 6379, username: "user", password: "pw", db: 0 }],
  ["rediss://h:6380", { host: "h", port: 6380, tls: {} }],
  ["redis://[::1]:6379", { host: "::1", port: 6379 }],
])("%s", (url, want) => {
  expect(redisUrlOptions(url)).toEqual(want);
});

test("another scheme is refused", () => {
  expect(() => redisUrlOptions("http://h")).toThrow(/redis:\/\//);
});
