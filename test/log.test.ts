import { describe, expect, test } from "bun:test";
import { createLogger } from "../src/log.ts";

describe("logger never writes secrets", () => {
  const capture = () => {
    const lines: string[] = [];
    return { lines, log: createLogger("debug", {}, (l) => lines.push(l)) };
  };

  test("secret-looking keys are redacted at any level of the call", () => {
    const { lines, log } = capture();
    log.info("x", { token: "t0k", password: "pw", pwd: "pw2", authorization: "Bearer b", refreshtoken: "r", user: "alice" });
    expect(lines[0]).not.toMatch(/t0k|pw2?"|Bearer b|"r"/);
    expect(lines[0]).toContain('"user":"alice"');
  });

  test("query errors keep the statement and drop the bound values", () => {
    const { lines, log } = capture();
    const err = new Error('Failed query: insert into "users" ("password_hash") values ($1)\nparams: $argon2id$v=19$secret-hash');
    log.error("boom", { err });
    expect(lines[0]).toContain("Failed query: insert into");
    expect(lines[0]).not.toContain("secret-hash");
    expect(lines[0]).toContain("params: [redacted]");
  });
});
