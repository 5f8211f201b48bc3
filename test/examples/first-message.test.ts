/** README "First message": `bun run example` against a running server, as a newcomer runs it. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startTestNode, type TestNode } from "../support/node.ts";

const ROOT = join(import.meta.dir, "../..");
const APP = { id: "quickstart", key: "q".repeat(40) };
let plain: TestNode;
let signed: TestNode;

beforeAll(async () => {
  plain = await startTestNode("pglite");
  signed = await startTestNode("pglite", { apiSignature: true, apiKeys: `${APP.id}:${APP.key}` });
});
afterAll(async () => {
  await plain?.stop();
  await signed?.stop();
});

async function runExample(env: Record<string, string>) {
  const proc = Bun.spawn(["bun", "run", "example"], { cwd: ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, out, err };
}

test("signs up two users, makes them friends and prints the message Bob received", async () => {
  const { code, out, err } = await runExample({ IBIS_URL: plain.url });
  expect(err).not.toContain("error");
  expect(code).toBe(0);
  expect(out).toContain("alice and bob are friends");
  expect(out).toMatch(/bob received from \d+: \{"text":"Hello, Bob!"\}/);
}, 30_000);

test("with IBIS_API_SIGNATURE on, the same script signs with IBIS_APP_ID/IBIS_APP_KEY (and fails without)", async () => {
  expect((await runExample({ IBIS_URL: signed.url, IBIS_APP_ID: APP.id, IBIS_APP_KEY: APP.key })).code).toBe(0);
  const unsigned = await runExample({ IBIS_URL: signed.url });
  expect(unsigned.code).not.toBe(0);
  expect(unsigned.err).toContain("X-Ibis-Signature");
}, 30_000);
