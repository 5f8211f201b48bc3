export { fromBase64, toBase64 } from "../../protocol/base64.ts";
