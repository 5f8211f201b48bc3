/**
 * A fixed statement compiled once. `Store.fixed` builds a drizzle `SQL` tree
 * and compiles it to text on every call: 64–82 µs of the node's CPU for the
 * device check behind every connect (src/delivery/inbox.ts), on every batch
 * of connects and on every lone one, for a text that never changes
 * (`bun bench/statement-cost.ts`). Here `build` runs once, with a placeholder
 * per argument; each call only binds the arguments.
 */
import { Placeholder, sql, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";

const dialect = new PgDialect();

export interface Bound {
  readonly text: string;
  readonly params: readonly unknown[];
}

export class FixedStatement<A extends readonly unknown[]> {
  #text: string | undefined;
  /** Per compiled parameter: the index of the argument it takes, or its constant value (`{ value }`). */
  #slots: readonly (number | { readonly value: unknown })[] = [];

  constructor(
    /** The statement over one placeholder per argument, in order; its text must not depend on them. */
    private readonly build: (...args: Placeholder[]) => SQL,
    private readonly arity: A["length"],
  ) {}

  /** The text and the parameters for these arguments. */
  bind(...args: A): Bound {
    if (this.#text === undefined) this.#compile();
    const params = new Array<unknown>(this.#slots.length);
    for (let i = 0; i < params.length; i++) {
      const s = this.#slots[i]!;
      params[i] = typeof s === "number" ? args[s] : s.value;
    }
    return { text: this.#text!, params };
  }

  #compile(): void {
    const names = Array.from({ length: this.arity }, (_, i) => `a${i}`);
    const q = dialect.sqlToQuery(this.build(...names.map((n) => sql.placeholder(n))));
    this.#slots = q.params.map((p) => {
      if (!(p instanceof Placeholder)) return { value: p };
      const at = names.indexOf(p.name);
      if (at < 0) throw new Error(`FixedStatement: unknown placeholder ${p.name}`);
      return at;
    });
    this.#text = q.sql;
  }
}
