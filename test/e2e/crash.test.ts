/**
 * Store first, proven the hard way: a real `bun src/main.ts` process takes a
 * C2C from the SDK, answers C2C_SERVER_ACK, and is killed with SIGKILL at that
 * moment (no shutdown, no flush). Restarted on the same database, the message
 * is in the sender's history and in the recipient's offline set. PostgreSQL
 * (a fresh database) and embedded PGlite (a temporary DATA_DIR).
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, type TestNode } from "../support/node.ts";
import { openStore } from "../../src/db/store.ts";
import { freshPostgresDatabase, pgliteTemplateBlob, storeKinds } from "../support/stores.ts";
import { tracked } from "../support/children.ts";
import { freePort } from "../cluster/processes.ts";
import { befriend, connect, message, ofType, signup } from "./support.ts";

const MAIN = join(import.meta.dir, "../../src/main.ts");

/** Env for a child Ibis without the test run's own database/Redis settings. */
function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(DATABASE_URL|DATA_DIR|REDIS_URL|IBIS_|PORT$)/.test(k)) env[k] = v;
  return { ...env, IBIS_LOG_LEVEL: "warn", IBIS_PASSWORD_MEMORY_KIB: "1024", IBIS_NODE_ID: "7", HOST: "127.0.0.1", ...extra };
}

/** Starts Ibis and waits (by condition) until /readyz answers 200. */
async function start(env: Record<string, string>): Promise<{ proc: Subprocess; node: TestNode }> {
  const port = freePort();
  const proc = tracked(Bun.spawn([process.execPath, MAIN], { env: childEnv({ ...env, PORT: String(port) }), stdout: "inherit", stderr: "inherit" }));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`ibis exited with ${proc.exitCode}`);
    const res = await fetch(`${url}/readyz`).catch(() => undefined);
    if (res?.status === 200) break;
    await Bun.sleep(25);
  }
  // api() and the e2e helpers only read `url`.
  return { proc, node: { url } as TestNode };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A fresh database for a child Ibis: a PostgreSQL database, or a PGlite DATA_DIR. */
async function freshEnv(kind: "pglite" | "postgres"): Promise<Record<string, string>> {
  if (kind === "postgres") {
    const db = await freshPostgresDatabase();
    cleanups.push(() => db.drop());
    return { DATABASE_URL: db.url };
  }
  const dir = mkdtempSync(join(tmpdir(), "ibis-crash-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  // Seeded from the cached migrated template: the child skips initdb (seconds) and finds the schema current.
  const seed = await openStore({ url: "", dataDir: dir, pgliteTemplate: await pgliteTemplateBlob(), migrate: false });
  await seed.close();
  return { DATA_DIR: dir };
}

for (const kind of storeKinds()) {
  describe(`SIGKILL after SERVER_ACK [${kind}]`, () => {
    test("the acknowledged message is in history and in the recipient's offline set after a restart", async () => {
      const env = await freshEnv(kind);
      let { proc, node } = await start(env);
      cleanups.push(() => void proc.kill("SIGKILL"));

      const alice = await signup(node, "alice", ["alice-phone"]);
      const bob = await signup(node, "bob", ["bob-phone"]);
      await befriend(node, alice, bob);
      const phone = await connect(node, alice, "alice-phone");
      const m = message("C2C", alice.userId, bob.userId, { text: "survives a crash" });
      phone.send(m);
      await phone.nextMessage(ofType("C2C_SERVER_ACK", m.id));
      proc.kill("SIGKILL");
      expect(await proc.exited).not.toBe(0);
      await phone.closed;

      ({ proc, node } = await start(env));
      const history = await api(node, "GET", `/api/v1/msg/history?chat_type=c2c&peer_id=${bob.userId}`, { token: alice.tokens["alice-phone"] });
      expect(history.body.code).toBe(0);
      expect(history.body.payload.list.map((x: { id: string }) => x.id)).toEqual([m.id]);
      const offline = await api(node, "GET", "/api/v1/msg/offline", { token: bob.tokens["bob-phone"] });
      const atBob = offline.body.payload.list.filter((x: { type: string }) => x.type === "C2C");
      expect(atBob).toHaveLength(1);
      expect(atBob[0]).toMatchObject({ id: m.id, from: alice.userId, to: bob.userId, payload: { text: "survives a crash" } });
      proc.kill("SIGTERM");
      await proc.exited;
    }, 60_000);

    test("killed in the middle of a group fan-out: every SERVER_ACKed group message is pulled after the restart", async () => {
      const env = await freshEnv(kind);
      let { proc, node } = await start(env);
      cleanups.push(() => void proc.kill("SIGKILL"));
      const alice = await signup(node, "alice", ["alice-phone"]);
      const bob = await signup(node, "bob", ["bob-phone"]);
      const made = await api(node, "POST", "/api/v1/group/add", { token: alice.tokens["alice-phone"], body: { member_uids: [bob.userId] } });
      const gid = BigInt(made.body.payload.group.gid);
      const phone = await connect(node, alice, "alice-phone");
      const sent = Array.from({ length: 300 }, (_, i) => message("C2G", alice.userId, gid, { text: `m${i}` }));
      for (const m of sent) phone.send(m);
      const acked: string[] = [];
      while (acked.length < 40) acked.push((await phone.nextMessage(ofType("C2G_SERVER_ACK"))).id);
      proc.kill("SIGKILL");
      expect(await proc.exited).not.toBe(0);
      await phone.closed;

      ({ proc, node } = await start(env));
      const offline = await api(node, "GET", "/api/v1/msg/offline?limit=1000", { token: bob.tokens["bob-phone"] });
      const pulled: string[] = offline.body.payload.list.filter((x: { type: string }) => x.type === "C2G").map((x: { id: string }) => x.id);
      for (const id of acked) expect(pulled).toContain(id);
      // What was stored keeps the sending order (one sender, one connection).
      const order = pulled.map((id) => sent.findIndex((m) => m.id === id));
      expect(order).toEqual([...order].sort((a, b) => a - b));
      proc.kill("SIGTERM");
      await proc.exited;
    }, 60_000);
  });
}
