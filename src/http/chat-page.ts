/**
 * The chat page (web/, docs/client.md) as Bun.serve routes. An HTML import:
 * Bun bundles its script and stylesheet itself — on first request under
 * `bun`, at `bun build --compile` time into the single binary — and serves
 * the chunks at `/chunk-<hash>.{js,css}`.
 */
import chatPage from "../../web/index.html";

export const chatPageRoutes = { "/app": chatPage, "/app/": chatPage };
