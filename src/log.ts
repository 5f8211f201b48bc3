/**
 * Minimal structured logger (one JSON line per event). Values under keys that
 * look secret are redacted, so a token, password or key can never be logged
 * by accident through a context object.
 */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };
const SECRET_KEY = /pass|pwd|secret|token|authorization|cookie|key|credential/i;

export interface Logger {
  debug(msg: string, ctx?: Record<string, unknown>): void;
  info(msg: string, ctx?: Record<string, unknown>): void;
  warn(msg: string, ctx?: Record<string, unknown>): void;
  error(msg: string, ctx?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
}

/**
 * Query errors (drizzle's "Failed query: … params: …") carry the bound
 * values, which can be a password hash or a token: keep the statement, drop
 * the values.
 */
export function scrubMessage(message: string): string {
  return message.replace(/\nparams: [\s\S]*$/, "\nparams: [redacted]");
}

export function redact(ctx: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(ctx)) {
    if (SECRET_KEY.test(k)) out[k] = "[redacted]";
    else if (typeof v === "bigint") out[k] = v.toString();
    else if (v instanceof Error) out[k] = { name: v.name, message: scrubMessage(v.message) };
    else out[k] = v;
  }
  return out;
}

export function createLogger(
  level: LogLevel = "info",
  bindings: Record<string, unknown> = {},
  write: (line: string) => void = (line) => process.stderr.write(line + "\n"),
): Logger {
  const threshold = ORDER[level];
  const emit = (lvl: LogLevel, msg: string, ctx?: Record<string, unknown>) => {
    if (ORDER[lvl] < threshold) return;
    write(JSON.stringify({ t: Date.now(), level: lvl, msg, ...redact({ ...bindings, ...ctx }) }));
  };
  return {
    debug: (m, c) => emit("debug", m, c),
    info: (m, c) => emit("info", m, c),
    warn: (m, c) => emit("warn", m, c),
    error: (m, c) => emit("error", m, c),
    child: (b) => createLogger(level, { ...bindings, ...b }, write),
  };
}
