// Client-side E2EE and device trust (spec §2.8, §2.10, §2.11, §3.1, §4.6).
export * from "./errors.ts";
export * from "./safety-number.ts";
export * from "./trust.ts";
export * from "./qr.ts";
export * from "./cross-signing.ts";
export * from "./message.ts";
export * from "./shamir.ts";
export * from "./device.ts";
