import { eq } from "drizzle-orm";
import { settings } from "./schema/index.ts";
import type { Store } from "./store.ts";

/**
 * Returns the value stored under `key`, creating it with `make()` the first
 * time. Every node sharing the database ends up with the same value: the
 * insert is first-writer-wins and everyone reads back what was kept.
 */
export async function sharedSetting(store: Store, key: string, make: () => string | Promise<string>): Promise<string> {
  const found = await store.db.select({ value: settings.value }).from(settings).where(eq(settings.key, key));
  if (found[0]) return found[0].value;
  await store.db.insert(settings).values({ key, value: await make() }).onConflictDoNothing();
  const kept = await store.db.select({ value: settings.value }).from(settings).where(eq(settings.key, key));
  return kept[0]!.value;
}
