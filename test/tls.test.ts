/** IBIS_TLS_CERT / IBIS_TLS_KEY: REST over https and /ws over wss, with a certificate made here and a client that trusts it. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IbisApi, IbisConnection } from "../src/client/index.ts";
import { startTestNode, type TestNode } from "./support/node.ts";

let dir: string;
let ca: string;
let node: TestNode;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ibis-tls-"));
  // A self-signed certificate for 127.0.0.1: the client trusts exactly it.
  const openssl = Bun.spawnSync([
    "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"),
  ], { stderr: "pipe" });
  if (openssl.exitCode !== 0) throw new Error(`openssl failed: ${openssl.stderr.toString()}`);
  ca = readFileSync(join(dir, "cert.pem"), "utf8");
  node = await startTestNode("pglite", { tlsCert: join(dir, "cert.pem"), tlsKey: join(dir, "key.pem") });
});
afterAll(async () => {
  await node?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("https answers a trusting client, init announces wss, and an untrusting client is refused", async () => {
  expect(node.url).toStartWith("https://");
  const api = new IbisApi({ url: node.url, fetchInit: { tls: { ca } } as RequestInit });
  const init = await api.call<{ ws_url: string }>("GET", "/api/v1/app/init");
  expect(init.ws_url).toBe(`wss://127.0.0.1:${node.port}/ws`);
  expect(await fetch(node.url + "/health").then(() => "answered", () => "refused")).toBe("refused");
  expect(await fetch(node.url.replace("https:", "http:") + "/health").then((r) => r.status, () => "refused")).not.toBe(200);
});

test("wss: a trusting SDK connection is accepted and pinged through TLS", async () => {
  const api = new IbisApi({ url: node.url, deviceId: "tls-dev", fetchInit: { tls: { ca } } as RequestInit });
  const s = await api.signup(`tls-${Date.now()}`, "tls-password");
  const conn = await IbisConnection.open({ url: node.url, token: s.token, deviceId: "tls-dev", tls: { ca } });
  try {
    expect(conn.protocol).toBe("svc.v2");
    conn.ping(7);
    expect(await conn.next((e) => e.kind === "pong")).toEqual({ kind: "pong", seq: 7 });
  } finally {
    await conn.close();
  }
  await expect(IbisConnection.open({ url: node.url, token: s.token, deviceId: "tls-dev" })).rejects.toThrow();
});
