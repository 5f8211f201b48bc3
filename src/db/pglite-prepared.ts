/**
 * Named prepared statements on PGlite. Its `query` parses, describes and
 * plans the text on every call, in six calls into the WebAssembly module: for
 * the delivery writer's statements (a large CTE) that was ~0.6 ms per batch,
 * most of what a one-message batch cost on the embedded store
 * (bench/FINDINGS.md). Here a text is parsed once per database (Parse with a
 * name) and each call is one Bind + Execute + Sync: the plan is PostgreSQL's
 * cached one, as postgres.js's prepared statements get on a server.
 * Parameters are sent as text, in the forms PGlite's own serializers write.
 */
import type { PGlite } from "@electric-sql/pglite";
import { arrayLiteral } from "./literals.ts";

const encoder = new TextEncoder();

/** A frontend message being built: type byte, length, then the fields. */
class Message {
  readonly #parts: Uint8Array[] = [];
  #size = 0;

  constructor(private readonly type: string) {}

  cstring(s: string): this {
    return this.bytes(encoder.encode(`${s}\0`));
  }

  // Big-endian by hand: a DataView needs `.buffer`, and the first `.buffer` of a small fresh array makes
  // JavaScriptCore move it into an ArrayBuffer of its own (src/protocol/frame.ts, SMALL_ARRAY): one per field.
  int16(n: number): this {
    const b = new Uint8Array(2);
    b[0] = n >> 8;
    b[1] = n;
    return this.bytes(b);
  }

  int32(n: number): this {
    return this.bytes(be32(new Uint8Array(4), 0, n));
  }

  bytes(b: Uint8Array): this {
    this.#parts.push(b);
    this.#size += b.length;
    return this;
  }

  /** Appends the message (type, length, fields) to `out`. */
  end(out: Uint8Array[]): void {
    const head = be32(new Uint8Array(5), 1, this.#size + 4);
    head[0] = this.type.charCodeAt(0);
    out.push(head, ...this.#parts);
  }
}

/** Writes `n` as a big-endian int32 at `at` (a Uint8Array keeps each byte's low 8 bits: negatives come out right). */
function be32(b: Uint8Array, at: number, n: number): Uint8Array {
  b[at] = n >>> 24;
  b[at + 1] = n >>> 16;
  b[at + 2] = n >>> 8;
  b[at + 3] = n;
  return b;
}

/** Messages at least this large (a Bind holding a large payload) are built in a buffer kept for them (`#large`). */
const LARGE_MESSAGE_BYTES = 1 << 20;

/** The parts as one message, in `into(size)` (a fresh buffer by default). */
function concat(parts: readonly Uint8Array[], into: (size: number) => Uint8Array = (n) => new Uint8Array(n)): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = into(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A parameter in PostgreSQL's text form; null for SQL NULL. Arrays (one level) become array literals. */
export function textParam(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case "string":
      return v;
    case "number":
    case "bigint":
      return String(v);
    case "boolean":
      return v ? "t" : "f";
  }
  if (Array.isArray(v)) return arrayLiteral(v.map(textParam));
  throw new TypeError(`unsupported statement parameter: ${Object.prototype.toString.call(v)}`);
}

interface Field {
  name: string;
  dataTypeID: number;
}
type Backend = { name: string; fields?: unknown[] };

/** Runs fixed statement texts on `client` as named prepared statements (one per text, for the client's life). */
export class PreparedStatements {
  readonly #names = new Map<string, string>();
  /**
   * The buffer large messages are built in, kept between them: a fresh 16 MiB one per large message was ~4,100
   * page faults on the event loop (PGlite runs on it) before PGlite copies it into its memory. Only the next
   * statement of this client writes it again: statements run one at a time (`#exclusive`), and PGlite has read
   * the message when `execProtocol` answers.
   */
  #kept = new Uint8Array(0);
  readonly #large = (n: number): Uint8Array => {
    if (n < LARGE_MESSAGE_BYTES) return new Uint8Array(n);
    if (this.#kept.length < n) this.#kept = new Uint8Array(Math.ceil(n / LARGE_MESSAGE_BYTES) * LARGE_MESSAGE_BYTES);
    return this.#kept.subarray(0, n);
  };

  constructor(private readonly client: PGlite) {}

  query<T>(text: string, params: readonly unknown[]): Promise<T[]> {
    return this.#exclusive(async () => {
      const name = this.#names.get(text) ?? (await this.#prepare(text));
      const out: Uint8Array[] = [];
      const bind = new Message("B").cstring("").cstring(name).int16(0).int16(params.length);
      for (const p of params) {
        if (p instanceof Uint8Array) {
          bind.int32(p.length).bytes(p); // a text parameter's UTF-8, as it is (Store.query)
          continue;
        }
        const t = textParam(p);
        if (t === null) bind.int32(-1);
        else {
          const b = encoder.encode(t);
          bind.int32(b.length).bytes(b);
        }
      }
      bind.int16(0).end(out);
      new Message("D").cstring("P").end(out); // the portal's row description: column names and types
      new Message("E").cstring("").int32(0).end(out);
      new Message("S").end(out);
      const { messages } = await this.client.execProtocol(concat(out, this.#large));
      return this.#rows<T>(messages as Backend[]);
    });
  }

  /**
   * As PGlite's own `query`: after any open transaction (PGlite has one
   * session: a statement sent meanwhile would run, and roll back, inside it),
   * then alone.
   */
  #exclusive<R>(fn: () => Promise<R>): Promise<R> {
    const c = this.client as unknown as { _runExclusiveTransaction<X>(f: () => Promise<X>): Promise<X> };
    return c._runExclusiveTransaction(() => this.client.runExclusive(fn));
  }

  async #prepare(text: string): Promise<string> {
    const name = `ibis_${this.#names.size + 1}`;
    const out: Uint8Array[] = [];
    new Message("P").cstring(name).cstring(text).int16(0).end(out);
    new Message("S").end(out);
    await this.client.execProtocol(concat(out));
    this.#names.set(text, name);
    return name;
  }

  /** Data rows as objects, each value parsed by the client's parser for its type (as `query` does). */
  #rows<T>(messages: readonly Backend[]): T[] {
    const parsers = (this.client as unknown as { parsers: Record<number, (v: string, typeId: number) => unknown> }).parsers;
    let fields: Field[] = [];
    const rows: T[] = [];
    for (const m of messages) {
      if (m.name === "rowDescription") fields = m.fields as Field[];
      else if (m.name === "dataRow") {
        const row: Record<string, unknown> = {};
        const values = m.fields as (string | null)[];
        for (let i = 0; i < fields.length; i++) {
          const f = fields[i]!;
          const v = values[i];
          const parse = parsers[f.dataTypeID];
          row[f.name] = v === null || v === undefined ? null : parse ? parse(v, f.dataTypeID) : v;
        }
        rows.push(row as T);
      }
    }
    return rows;
  }
}
