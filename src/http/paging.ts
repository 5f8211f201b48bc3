import { zAsSent } from "./zod.ts";

/** Spec §2.1.6 paging: page from 1, size default 20 (per endpoint), max 1000. */
export interface Page {
  readonly page: number;
  readonly size: number;
  readonly offset: number;
}

export const MAX_PAGE_SIZE = 1000;
/** Pages past this are clamped to it: an offset stays a small integer whatever number is sent (1e300, 20 digits). */
export const MAX_PAGE = 1_000_000;

function int(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === "string" && /^\s*-?\d+\s*$/.test(value)) return Number.parseInt(value, 10);
  return undefined;
}

/** The paging fields as a route schema declares them (`parsePage` reads them as sent). */
export const pageFields = {
  page: zAsSent("page number from 1 (default 1)"),
  size: zAsSent("page size (default 20 unless the route says otherwise, at most 1000)"),
};

export function parsePage(input: { page?: unknown; size?: unknown }, defaultSize = 20): Page {
  const p = int(input.page);
  const page = p === undefined || p < 1 ? 1 : Math.min(p, MAX_PAGE);
  const s = int(input.size);
  const size = s === undefined || s < 1 ? defaultSize : Math.min(s, MAX_PAGE_SIZE);
  return { page, size, offset: (page - 1) * size };
}

export interface Paged<T> {
  total: number;
  page: number;
  size: number;
  list: T[];
}

export function paged<T>(page: Page, total: number, list: T[]): Paged<T> {
  return { total, page: page.page, size: page.size, list };
}

/** Spec §2.1.7 batch answer. */
export interface BatchResult<Id> {
  success: Id[];
  failed: { id: Id; error: string }[];
}

export async function batch<Id>(
  ids: readonly Id[],
  each: (id: Id) => Promise<string | undefined>,
): Promise<BatchResult<Id>> {
  const out: BatchResult<Id> = { success: [], failed: [] };
  for (const id of ids) {
    const error = await each(id);
    if (error === undefined) out.success.push(id);
    else out.failed.push({ id, error });
  }
  return out;
}
