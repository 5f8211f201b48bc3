/**
 * Real Ibis processes for the cluster tests: `bun src/main.ts`, each on its
 * own port, sharing one PostgreSQL database and one Redis (prefix per test),
 * plus REST/SDK helpers that talk to them like any client.
 */
import type { Subprocess } from "bun";
import { createServer, connect as netConnect, type AddressInfo, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { IbisConnection, type SubProtocolName } from "../../src/client/index.ts";
import { parseJson, stringifyJson } from "../../src/protocol/json.ts";
import { tracked } from "../support/children.ts";

export const MAIN = join(import.meta.dir, "../../src/main.ts");
export const TOKEN_SECRET = "cluster-test-secret-0123456789abcdef";

/** Env for a child Ibis without the test run's own database/Redis settings. */
export function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(DATABASE_URL|REDIS_URL|IBIS_|PORT$)/.test(k)) env[k] = v;
  return { ...env, IBIS_LOG_LEVEL: "warn", ...extra };
}

export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

export interface IbisProcess {
  readonly proc: Subprocess;
  readonly port: number;
  readonly url: string;
  readonly nodeId: number;
  /** GET /readyz status. */
  ready(): Promise<number>;
  /** SIGTERM and wait (SIGKILL if it has not exited after 10 s). */
  stop(): Promise<void>;
}

/** Starts `bun src/main.ts` on a free port and waits for /readyz 200 (new connection each time). */
export async function startIbisProcess(env: {
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  extra?: Record<string, string>;
  /** A restarted node keeps its port (its clients reconnect to the same URL). */
  port?: number;
  /** "pipe": the test reads the node's log (proc.stderr). */
  stderr?: "pipe";
}): Promise<IbisProcess> {
  const port = env.port ?? freePort();
  const proc = tracked(Bun.spawn([process.execPath, MAIN], {
    env: childEnv({
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: env.databaseUrl,
      REDIS_URL: env.redisUrl,
      IBIS_REDIS_PREFIX: env.prefix,
      IBIS_THROTTLE_OFF: "1",
      IBIS_TOKEN_SECRET: TOKEN_SECRET,
      IBIS_PASSWORD_MEMORY_KIB: "1024",
      ...env.extra,
    }),
    stdout: "inherit",
    stderr: env.stderr ?? "inherit",
  }));
  const url = `http://127.0.0.1:${port}`;
  // Bounded: an answer that never comes counts as "not reachable" (0), and the caller's `until` gives up in time.
  const ready = async () =>
    (await fetch(`${url}/readyz`, { headers: { connection: "close" }, signal: AbortSignal.timeout(5_000) }).catch(() => undefined))?.status ?? 0;
  let nodeId = -1;
  for (let i = 0; i < 500 && proc.exitCode === null; i++) {
    const res = await fetch(`${url}/readyz`, { headers: { connection: "close" } }).catch(() => undefined);
    if (res?.status === 200) {
      nodeId = ((await res.json()) as { payload: { node_id: number } }).payload.node_id;
      break;
    }
    await Bun.sleep(20);
  }
  if (nodeId < 0) {
    proc.kill("SIGKILL");
    throw new Error(`ibis on ${port} did not become ready (exit ${proc.exitCode})`);
  }
  return {
    proc,
    port,
    url,
    nodeId,
    ready,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await proc.exited;
      clearTimeout(t);
    },
  };
}

/** REST through the project's JSON codec (exact 64-bit ids). */
export async function rest(
  base: string,
  method: string,
  path: string,
  init: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(base + path, { method, headers, body: init.body === undefined ? undefined : stringifyJson(init.body) });
  return { status: res.status, body: parseJson(await res.text()) };
}

export interface Account {
  readonly userId: bigint;
  readonly account: string;
  /** Tokens per device, from REST login (which registers the device). */
  token(deviceId: string): Promise<string>;
}

const PWD = "cluster-pwd-1";

/** Signs up through REST on `base`; `token(did)` logs that device in (once) on the same node. */
export async function signup(base: string, account: string): Promise<Account> {
  const res = await rest(base, "POST", "/api/v1/passport/signup", { body: { account, pwd: PWD }, headers: { "X-Device-ID": "signup" } });
  if (res.body?.code !== 0) throw new Error(`signup ${account}: ${JSON.stringify(res.body?.msg)}`);
  const tokens = new Map<string, Promise<string>>();
  return {
    userId: res.body.payload.uid as bigint,
    account,
    token(deviceId) {
      let t = tokens.get(deviceId);
      if (!t) {
        t = rest(base, "POST", "/api/v1/passport/login", { body: { account, pwd: PWD }, headers: { "X-Device-ID": deviceId, "X-Device-Type": "desktop" } }).then(
          (r) => {
            if (r.body?.code !== 0) throw new Error(`login ${account}/${deviceId}: ${JSON.stringify(r.body?.msg)}`);
            return r.body.payload.token as string;
          },
        );
        tokens.set(deviceId, t);
      }
      return t;
    },
  };
}

/** Makes two accounts friends through REST (request, confirm). */
export async function befriend(base: string, a: Account, b: Account): Promise<void> {
  const add = await rest(base, "POST", "/api/v1/friend/add", { token: await a.token("signup"), body: { to: b.userId } });
  if (add.body?.code !== 0) throw new Error(`friend/add: ${JSON.stringify(add.body)}`);
  const ok = await rest(base, "POST", "/api/v1/friend/confirm", { token: await b.token("signup"), body: { from: a.userId } });
  if (ok.body?.code !== 0) throw new Error(`friend/confirm: ${JSON.stringify(ok.body)}`);
}

/** An SDK connection of `who`'s device `did` to `node`. */
export async function openOn(node: { url: string }, who: Account, did: string, protocols: SubProtocolName[] = ["svc.v2"]): Promise<IbisConnection> {
  return IbisConnection.open({ url: node.url, token: await who.token(did), deviceId: did, protocols });
}

/** Every message id `/api/v1/msg/offline` lists for the device, following has_more. */
export async function offlineIds(node: { url: string }, who: Account, did: string): Promise<string[]> {
  const token = await who.token(did);
  const ids: string[] = [];
  const res = await rest(node.url, "GET", `/api/v1/msg/offline?did=${encodeURIComponent(did)}&limit=1000`, { token });
  if (res.body?.code !== 0) throw new Error(`msg/offline: ${JSON.stringify(res.body)}`);
  for (const m of res.body.payload.list as { id: string }[]) ids.push(m.id);
  return ids;
}

/**
 * A TCP relay to Redis or PostgreSQL for one node: `cut()` drops its
 * connections and refuses new ones, `restore()` listens again on the same
 * port, `freeze()` keeps every connection open and forwards nothing (a peer
 * that stopped answering). Cuts one node off while the server stays up for
 * the others.
 */
export class TcpRelay {
  readonly #socks = new Set<Socket>();
  readonly #pairs = new Set<[Socket, Socket]>();
  #server: Server | undefined;
  #frozen = false;
  port = 0;

  constructor(readonly target: { host: string; port: number }) {}

  /** A relay to the host and port of `url` (redis:// or postgres://, their default ports when none is given). */
  static async start(url: string): Promise<TcpRelay> {
    const u = new URL(url);
    const relay = new TcpRelay({ host: u.hostname, port: u.port ? Number(u.port) : u.protocol === "redis:" ? 6379 : 5432 });
    await relay.restore();
    return relay;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** `url` (user, database, options kept) pointed at this relay. */
  via(url: string): string {
    const u = new URL(url);
    u.hostname = "127.0.0.1";
    u.port = String(this.port);
    return u.toString();
  }

  /** Listens (again, after `cut()`: the port it held is free only then). */
  restore(): Promise<void> {
    if (this.#server) return Promise.reject(new Error("TcpRelay.restore() while listening: cut() first"));
    this.#frozen = false;
    const server = createServer((client) => {
      // A connection the kernel accepted just before a cut reaches us after it: refuse it like the cut ones.
      if (this.#server !== server) return void client.destroy();
      this.#socks.add(client);
      client.on("error", () => {});
      client.on("close", () => this.#socks.delete(client));
      if (this.#frozen) return void client.pause(); // accepted, never answered
      const upstream = netConnect(this.target.port, this.target.host);
      const pair: [Socket, Socket] = [client, upstream];
      this.#pairs.add(pair);
      this.#socks.add(upstream);
      upstream.on("error", () => {});
      for (const s of pair) {
        s.on("close", () => {
          this.#socks.delete(s);
          this.#pairs.delete(pair);
          (s === client ? upstream : client).destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    this.#server = server;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => {
        this.port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  /** Every connection stays open and nothing more crosses it, either way; new connections are accepted and never answered. */
  freeze(): void {
    this.#frozen = true;
    for (const [client, upstream] of this.#pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  /**
   * Stops listening and drops every relayed connection. It does not wait for
   * the server's close callback: that one waits for every connection to end,
   * and one accepted in the same instant could keep it (and the test) waiting.
   */
  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    server?.close();
    for (const s of this.#socks) s.destroy();
    await Bun.sleep(0);
  }
}
