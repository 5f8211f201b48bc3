import { bigint } from "drizzle-orm/pg-core";

/** A 64-bit entity id column: always `bigint` in JS, never `number`. */
export const id = (name: string) => bigint(name, { mode: "bigint" });
/** Milliseconds UTC (spec §2.1.2); well inside 2^53, so `number` is exact. */
export const ms = (name: string) => bigint(name, { mode: "number" });
export const nowMs = () => Date.now();
