/**
 * A PostgreSQL and a Redis of the test's own, on free loopback ports, that it
 * may stop, kill and restart (the fault suites): never the shared 5432/6379.
 * PostgreSQL runs from the packaged binaries as the `postgres` user when the
 * test runs as root (initdb refuses root).
 */
import type { Subprocess } from "bun";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../cluster/processes.ts";

function pgBin(name: string): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(join(root, v, "bin", name))) return join(root, v, "bin", name);
  return name; // on PATH
}

const asRoot = process.getuid?.() === 0;

async function run(cmd: string[], user?: string): Promise<void> {
  const argv = asRoot && user ? ["runuser", "-u", user, "--", ...cmd] : cmd;
  const p = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
  const code = await p.exited;
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}: ${await new Response(p.stderr).text()}`);
}

export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), "ibis-pg-"));
    if (asRoot) {
      const { uid, gid } = await pgUser();
      chownSync(dir, uid, gid);
    }
    chmodSync(dir, 0o700);
    await run([pgBin("initdb"), "-D", join(dir, "data"), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"], "postgres");
    const pg = new PrivatePostgres(dir, freePort());
    await pg.resume();
    return pg;
  }

  /** Starts (again) on the same port and data; resolves once it accepts connections. */
  async resume(): Promise<void> {
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=200`;
    await run([pgBin("pg_ctl"), "-D", join(this.dir, "data"), "-l", join(this.dir, "log"), "-o", opts, "-w", "-t", "60", "start"], "postgres");
  }

  /** Stops at once (`immediate`: no checkpoint, connections cut, as a crash looks to clients). */
  async stop(): Promise<void> {
    await run([pgBin("pg_ctl"), "-D", join(this.dir, "data"), "-m", "immediate", "-w", "stop"], "postgres");
  }

  async dispose(): Promise<void> {
    await this.stop().catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function pgUser(): Promise<{ uid: number; gid: number }> {
  const p = Bun.spawn(["id", "-u", "postgres"], { stdout: "pipe" });
  const g = Bun.spawn(["id", "-g", "postgres"], { stdout: "pipe" });
  return { uid: Number(await new Response(p.stdout).text()), gid: Number(await new Response(g.stdout).text()) };
}

export class PrivateRedis {
  #proc: Subprocess | undefined;
  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(freePort());
    await r.resume();
    return r;
  }

  async resume(): Promise<void> {
    this.#proc = Bun.spawn(["redis-server", "--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdout: "ignore",
      stderr: "ignore",
    });
    for (let i = 0; i < 200; i++) {
      const ok = await Bun.connect({ hostname: "127.0.0.1", port: this.port, socket: { data() {} } }).then(
        (s) => (s.end(), true),
        () => false,
      );
      if (ok) return;
      await Bun.sleep(25);
    }
    throw new Error("private redis did not start");
  }

  /** kill -9: every key is gone (no persistence), as a Redis that crashed and came back empty. */
  async stop(): Promise<void> {
    const p = this.#proc;
    this.#proc = undefined;
    if (!p) return;
    p.kill("SIGKILL");
    await p.exited;
  }

  dispose(): Promise<void> {
    return this.stop();
  }
}
