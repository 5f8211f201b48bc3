import { describe, expect, test } from "bun:test";
import { FEATURES, featureMatrix, featuresFromConfig, type Feature } from "../../../src/domain/features/matrix.ts";

const allOn = Object.fromEntries(FEATURES.map((f) => [f, true])) as Record<Feature, boolean>;
const with_ = (changes: Partial<Record<Feature, boolean>>) => ({ ...allOn, ...changes });
const channelOff = with_({ channel: false, channel_discover: false, channel_invitation: false, channel_order: false });

describe("feature matrix (spec §2.5)", () => {
  test.each([
    ["rule 1: no block → all on", undefined, allOn],
    ["rule 1: null block → all on", null, allOn],
    ["rule 1: not an object → all on", [1, 2], allOn],
    ["rule 2: empty block → all on", {}, allOn],
    ["rule 2: feature without enabled → on", { e2ee: {} }, allOn],
    ["rule 2: enabled not a boolean → on", { e2ee: { enabled: "false" } }, allOn],
    ["explicit off", { e2ee: { enabled: false } }, with_({ e2ee: false })],
    ["bare boolean shorthand", { moment: false, location: true }, with_({ moment: false })],
    ["rule 3: channel off turns its dependents off", { channel: { enabled: false } }, channelOff],
    [
      "rule 3: dependents cannot be on without channel",
      { channel: { enabled: false }, channel_discover: { enabled: true }, channel_order: true },
      channelOff,
    ],
    ["dependent off alone", { channel_order: { enabled: false } }, with_({ channel_order: false })],
    ["unknown keys are ignored", { teleport: { enabled: true } }, allOn],
  ] as [string, unknown, Record<Feature, boolean>][])("%s", (_name, block, want) => {
    const got = featureMatrix(block);
    expect(got).toEqual(want);
    expect(Object.keys(got)).toEqual([...FEATURES]);
  });

  test("from config text: empty means the block is missing", () => {
    expect(featuresFromConfig("")).toEqual(allOn);
    expect(featuresFromConfig('{"group_task":{"enabled":false}}')).toEqual(with_({ group_task: false }));
  });
});
