import { FieldCipher } from "../../crypto/fields.ts";
import type { Notifier } from "../../delivery/ports.ts";
import type { Services } from "../../services.ts";
import type { SocialFacts } from "../social/facts.ts";
import { DeviceKeys } from "./keys.ts";
import { Shards } from "./shards.ts";
import { TrustEvents } from "./trust-events.ts";

export { MAX_SHARD_CHARS, MIN_THRESHOLD } from "./shards.ts";

/** The server side of E2EE (docs/e2ee.md): device keys, signed trust events, social-recovery shards. */
export interface E2ee {
  readonly keys: DeviceKeys;
  readonly trust: TrustEvents;
  readonly shards: Shards;
}

export async function createE2ee(services: Services, deps: { readonly notifier: Notifier; readonly facts: SocialFacts }): Promise<E2ee> {
  const ctx = {
    db: services.store.db,
    ids: services.ids,
    now: services.now,
    log: services.log,
    notifier: deps.notifier,
    facts: deps.facts,
    fields: await FieldCipher.fromSecret(services.secrets.fieldKey),
    config: services.config,
  };
  return { keys: new DeviceKeys(ctx), trust: new TrustEvents(ctx), shards: new Shards(ctx) };
}
