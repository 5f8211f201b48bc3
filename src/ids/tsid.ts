/**
 * 64-bit time-sortable ids (spec §2.1.1), TSID layout:
 *   42 bits milliseconds since 2020-01-01T00:00:00Z | 10 bits node | 12 bits sequence.
 * Kept as `bigint` end to end; ids are above 2^53 from the first one minted,
 * so any accidental trip through `number` shows up at once in tests.
 */
export const ID_EPOCH_MS = 1_577_836_800_000n;
const NODE_BITS = 10n;
const SEQ_BITS = 12n;
const SEQ_MAX_N = (1 << Number(SEQ_BITS)) - 1;
export const MAX_NODE_ID = (1 << Number(NODE_BITS)) - 1;
// Ids live in PostgreSQL int8 columns: anything above the signed range is not one of ours.
const ID_MAX = (1n << 63n) - 1n;

export class IdGenerator {
  readonly #node: bigint;
  #lastMs = 0;
  #seq = 0;
  /** The id's bits above the sequence for `#prefixMs`: minted once a millisecond (BigInt arithmetic allocates). */
  #prefix = 0n;
  #prefixMs = Number.NaN;

  constructor(nodeId: number, private readonly now: () => number = Date.now) {
    if (!Number.isInteger(nodeId) || nodeId < 0 || nodeId > MAX_NODE_ID) {
      throw new RangeError(`node id must be 0..${MAX_NODE_ID}`);
    }
    this.#node = BigInt(nodeId);
  }

  next(): bigint {
    // The clock's milliseconds and the sequence as numbers; one bigint operation per id (a message mints one).
    let ms = this.now();
    // The clock going backwards must not produce a smaller or repeated id.
    if (ms < this.#lastMs) ms = this.#lastMs;
    if (ms === this.#lastMs) {
      this.#seq = (this.#seq + 1) & SEQ_MAX_N;
      if (this.#seq === 0) ms = this.#lastMs + 1; // 4096 ids in one ms: borrow the next ms.
    } else {
      this.#seq = 0;
    }
    this.#lastMs = ms;
    if (ms !== this.#prefixMs) {
      this.#prefix = ((BigInt(ms) - ID_EPOCH_MS) << (NODE_BITS + SEQ_BITS)) | (this.#node << SEQ_BITS);
      this.#prefixMs = ms;
    }
    return this.#prefix | BigInt(this.#seq);
  }
}

/** The millisecond timestamp inside an id. */
export function idTimestamp(id: bigint): number {
  return Number((id >> (NODE_BITS + SEQ_BITS)) + ID_EPOCH_MS);
}

/** The smallest id minted at or after `ms`: a lower bound for range scans by time. */
export function idFloorForTime(ms: number): bigint {
  return (BigInt(ms) - ID_EPOCH_MS) << (NODE_BITS + SEQ_BITS);
}

const DECIMAL = /^(0|[1-9][0-9]{0,19})$/;

/**
 * Converts an id as it arrives (JSON number read exactly as bigint, safe
 * integer, or decimal string) into a bigint. Returns undefined for anything
 * else, including unsafe `number`s, which have already lost precision.
 */
export function toId(value: unknown): bigint | undefined {
  let v: bigint;
  if (typeof value === "bigint") v = value;
  else if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) return undefined;
    v = BigInt(value);
  } else if (typeof value === "string") {
    const s = value.trim();
    if (!DECIMAL.test(s)) return undefined;
    v = BigInt(s);
  } else return undefined;
  return v >= 0n && v <= ID_MAX ? v : undefined;
}
