import { describe, expect, test } from "bun:test";
import { negotiate, parseOffer, Proto } from "../../src/ws/negotiate.ts";

describe("sub-protocol negotiation (pure)", () => {
  const table: [string | null, ReturnType<typeof negotiate>][] = [
    [null, { ok: true, proto: Proto.Json, answer: undefined }],
    ["", { ok: true, proto: Proto.Json, answer: undefined }],
    [" , ", { ok: true, proto: Proto.Json, answer: undefined }],
    ["svc.v2", { ok: true, proto: Proto.V2, answer: "svc.v2" }],
    ["svc-protobuf", { ok: true, proto: Proto.Protobuf, answer: "svc-protobuf" }],
    ["svc-json", { ok: true, proto: Proto.Json, answer: "svc-json" }],
    [" svc.v2 ", { ok: true, proto: Proto.V2, answer: "svc.v2" }],
    ["svc.v2x", { ok: false, answer: "svc.v2x", offered: ["svc.v2x"] }],
    ["text, svc-json, svc-protobuf, svc.v2", { ok: true, proto: Proto.V2, answer: "svc.v2" }],
    ["svc-json,svc-protobuf", { ok: true, proto: Proto.Protobuf, answer: "svc-protobuf" }],
    ["text,svc-json", { ok: true, proto: Proto.Json, answer: "svc-json" }],
    ["text", { ok: true, proto: Proto.Text, answer: "text" }],
    ["foo, text", { ok: true, proto: Proto.Text, answer: "text" }],
    ["SVC.V2, svc-json", { ok: true, proto: Proto.Json, answer: "svc-json" }],
    ["foo", { ok: false, answer: "foo", offered: ["foo"] }],
    ["foo, bar", { ok: false, answer: "foo", offered: ["foo", "bar"] }],
  ];
  for (const [header, expected] of table) {
    test(`${JSON.stringify(header)} → ${JSON.stringify(expected)}`, () => {
      expect(negotiate(header)).toEqual(expected);
    });
  }
  test("parseOffer trims and drops empty tokens", () => {
    expect(parseOffer(" a ,, b,")).toEqual(["a", "b"]);
  });
});
