/**
 * The payment-provider interface behind `pay` (docs/channels.md). One provider
 * is built in: `dev`, which accepts every charge, for development and tests.
 * IBIS_CHANNEL_PAYMENT_PROVIDER picks it; `auto` (the default) means `dev`
 * outside production and none in production, where `pay` then answers
 * payment_unavailable until an operator configures a provider explicitly.
 */
import type { Result } from "../errors.ts";
import { fail, ok } from "../errors.ts";

export interface Charge {
  readonly orderNo: string;
  readonly userId: bigint;
  readonly channelId: bigint;
  readonly amount: number;
  readonly currency: string;
}

export interface PaymentProvider {
  readonly name: string;
  /** Charges the buyer; the value is the provider's transaction reference. Failure kind: payment_failed. */
  charge(charge: Charge): Promise<Result<string>>;
}

/** Accepts every charge of a non-negative amount. Never configured in production unless on purpose. */
export const devProvider: PaymentProvider = {
  name: "dev",
  async charge(c) {
    if (c.amount < 0) return fail("payment_failed", "negative amount");
    return ok(`dev-${c.orderNo}`);
  },
};

export type ProviderSetting = "auto" | "dev" | "none";

export function paymentProvider(setting: ProviderSetting, env: string): PaymentProvider | undefined {
  if (setting === "dev" || (setting === "auto" && env !== "production")) return devProvider;
  return undefined;
}
