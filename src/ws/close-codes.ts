// The close-code table moved to src/model (shared with the SDK); this path stays for existing imports.
export { CloseCode, mayReconnect, type CloseCodeValue } from "../model/close-codes.ts";
