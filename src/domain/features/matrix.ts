import { parseJson } from "../../protocol/json.ts";

/** Spec §2.5: the feature keys, in the order they are answered. */
export const FEATURES = [
  "core",
  "e2ee",
  "channel",
  "location",
  "moment",
  "channel_discover",
  "channel_invitation",
  "channel_order",
  "group_vote",
  "group_schedule",
  "group_task",
] as const;

export type Feature = (typeof FEATURES)[number];
export type FeatureMatrix = Record<Feature, boolean>;

const CHANNEL_DEPENDENTS: readonly Feature[] = ["channel_discover", "channel_invitation", "channel_order"];

/** A feature's own setting: `{enabled: bool}` or, as a shorthand, a bare boolean. Anything else is "no setting". */
function enabledSetting(entry: unknown): boolean | undefined {
  if (typeof entry === "boolean") return entry;
  if (entry && typeof entry === "object" && typeof (entry as { enabled?: unknown }).enabled === "boolean") {
    return (entry as { enabled: boolean }).enabled;
  }
  return undefined;
}

/**
 * The matrix from the configuration block (spec §2.5 rules 1-3):
 * no block → all on; a missing feature or one without an enabled setting → on;
 * the channel_* dependents are false whenever channel is off.
 */
export function featureMatrix(block: unknown): FeatureMatrix {
  const conf = block && typeof block === "object" && !Array.isArray(block) ? (block as Record<string, unknown>) : {};
  const out = {} as FeatureMatrix;
  for (const f of FEATURES) out[f] = enabledSetting(conf[f]) ?? true;
  if (!out.channel) for (const f of CHANNEL_DEPENDENTS) out[f] = false;
  return out;
}

/** The matrix for the IBIS_FEATURES text: "" means the block is missing (rule 1). */
export function featuresFromConfig(text: string): FeatureMatrix {
  return featureMatrix(text.trim() === "" ? undefined : parseJson(text));
}
