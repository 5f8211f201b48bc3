import type { Subprocess } from "bun";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** Repository root (bench/lib/../..): every child runs from here. */
export const ROOT = resolve(import.meta.dir, "../..");

/** A server started as its own process, listening on a loopback port. */
export interface RunningServer {
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  /** ws://127.0.0.1:<port> (append the path). */
  readonly ws: string;
  readonly http: string;
  /** Last output lines (for error messages). */
  tail(): string;
  stop(): Promise<void>;
}

export interface ServerSpec {
  readonly name: string;
  readonly cmd: string[];
  readonly env?: Record<string, string>;
  /** Where the server runs (ROOT): another checkout of the project, for a paired A/B of two trees (`c2c --compare-tree`). */
  readonly cwd?: string;
  /** Extracts the listening port from one output line; undefined until ready. */
  readonly ready?: (line: string) => number | undefined;
  readonly timeoutMs?: number;
  /** How long `stop` waits after SIGTERM before SIGKILL (3 s; a node writing a CPU profile as it exits needs longer). */
  readonly stopGraceMs?: number;
}

/** Baselines print `READY <port>` once listening (see bench/baselines/*). */
export const readyLine = (line: string): number | undefined => {
  const m = /^READY (\d+)/.exec(line);
  return m ? Number(m[1]) : undefined;
};

/** Reads a child's stream line by line for its whole life (a full pipe would block the child). */
async function pumpLines(stream: ReadableStream<Uint8Array>, onLine: (l: string) => void): Promise<void> {
  const dec = new TextDecoder();
  let buf = "";
  for await (const chunk of stream) {
    buf += dec.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      onLine(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  }
  if (buf) onLine(buf);
}

/**
 * A loopback TCP port free right now (bound and released). Worker processes
 * share one fixed port (reusePort), so a clustered node cannot take PORT=0.
 */
export function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

export async function startServer(spec: ServerSpec): Promise<RunningServer> {
  const proc = Bun.spawn(spec.cmd, {
    cwd: spec.cwd ?? ROOT,
    env: { ...process.env, ...spec.env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines: string[] = [];
  const ready = spec.ready ?? readyLine;
  let resolvePort!: (p: number) => void;
  const portP = new Promise<number>((r) => (resolvePort = r));
  const onLine = (l: string) => {
    lines.push(l);
    if (lines.length > 40) lines.shift();
    const p = ready(l);
    if (p !== undefined) resolvePort(p);
  };
  void pumpLines(proc.stdout, onLine);
  void pumpLines(proc.stderr, onLine);
  const tail = () => lines.join("\n");
  const timeout = spec.timeoutMs ?? 30_000;
  const port = await Promise.race([
    portP,
    proc.exited.then((code) => Promise.reject(new Error(`${spec.name} exited (${code}) before ready:\n${tail()}`))),
    Bun.sleep(timeout).then(() => Promise.reject(new Error(`${spec.name} not ready after ${timeout} ms:\n${tail()}`))),
  ]).catch(async (e) => {
    proc.kill("SIGKILL");
    throw e;
  });
  return {
    name: spec.name,
    pid: proc.pid,
    port,
    ws: `ws://127.0.0.1:${port}`,
    http: `http://127.0.0.1:${port}`,
    tail,
    stop: () => stopProc(proc, spec.stopGraceMs),
  };
}

/** SIGTERM, then SIGKILL after `graceMs` (3 s). */
export async function stopProc(proc: Subprocess, graceMs = 3000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill("SIGTERM");
  const done = await Promise.race([proc.exited.then(() => true), Bun.sleep(graceMs).then(() => false)]);
  if (!done) {
    proc.kill("SIGKILL");
    await proc.exited;
  }
}

let clientSeq = 0;

/** A load-generator process: params go in as a JSON file (`@path`), events and the result come back as JSON lines. */
export interface Client<R> {
  readonly pid: number;
  /** Resolves with the first stdout JSON line whose `event` is `name`. */
  event(name: string): Promise<Record<string, unknown>>;
  signal(sig: "SIGUSR1" | "SIGUSR2"): void;
  /** Resolves with the last JSON line having `event: "result"`. */
  readonly result: Promise<R>;
}

export function startClient<R>(script: string, params: object, opts: { timeoutMs: number; runtime?: string }): Client<R> {
  // Params go through a file: thousands of per-connection tokens exceed one argument's 128 KiB limit.
  const file = join(tmpdir(), `ibis-bench-${process.pid}-${++clientSeq}.json`);
  writeFileSync(file, JSON.stringify(params));
  const proc = Bun.spawn([opts.runtime ?? "bun", resolve(ROOT, script), `@${file}`], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const events: Record<string, unknown>[] = [];
  const waiters: { name: string; resolve: (e: Record<string, unknown>) => void }[] = [];
  const errs: string[] = [];
  let result: R | undefined;
  const onLine = (l: string) => {
    if (!l.startsWith("{")) return void errs.push(l);
    const e = JSON.parse(l) as Record<string, unknown>;
    if (e.event === "result") result = e as R;
    events.push(e);
    for (const w of waiters.filter((w) => w.name === e.event)) w.resolve(e);
  };
  const out = pumpLines(proc.stdout, onLine);
  void pumpLines(proc.stderr, (l) => {
    errs.push(l);
    if (errs.length > 40) errs.shift();
  });
  // The generator stops itself; this kill is the backstop of a bounded run.
  const killer = setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs);
  const finished = Promise.all([proc.exited, out]).then(([code]) => {
    clearTimeout(killer);
    rmSync(file, { force: true });
    if (result === undefined) throw new Error(`${script} exited (${code}) without a result:\n${errs.join("\n")}`);
    return result;
  });
  return {
    pid: proc.pid,
    event(name) {
      const seen = events.find((e) => e.event === name);
      if (seen) return Promise.resolve(seen);
      return Promise.race([
        new Promise<Record<string, unknown>>((r) => waiters.push({ name, resolve: r })),
        finished.then(() => Promise.reject(new Error(`${script} finished before event ${name}:\n${errs.join("\n")}`))),
      ]);
    },
    signal: (sig) => proc.kill(sig),
    result: finished,
  };
}

/** Runs `count` copies of a generator (each gets `index` and `of`) and collects their results. */
export async function runClients<R>(script: string, count: number, params: object, timeoutMs: number): Promise<R[]> {
  return Promise.all(
    Array.from({ length: count }, (_, index) => startClient<R>(script, { ...params, index, of: count }, { timeoutMs }).result),
  );
}
