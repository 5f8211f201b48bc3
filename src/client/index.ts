/** Everything of the client side for in-repo use: the published SDK (sdk.ts) plus `IbisConnection`, which adds the protobuf forms. */
export * from "./sdk.ts";
export { IbisConnection } from "./connection.ts";
