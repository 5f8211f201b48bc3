// Every table of Ibis, one file per area. drizzle-kit reads this module.
export * from "./users.ts";
export * from "./system.ts";
export * from "./messages.ts";
export * from "./social.ts";
export * from "./delivery.ts";
export * from "./channels.ts";
export * from "./e2ee.ts";
export * from "./attachments.ts";
export * from "./timeline.ts";
export * from "./accounts.ts";
