/**
 * PGlite's runtime files, embedded in `bun build --compile` binaries.
 * PGlite normally loads pglite.wasm, initdb.wasm and pglite.data from next to
 * its own module (`new URL(…, import.meta.url)`), which a compiled binary does
 * not have on disk. `with { type: "file" }` makes the bundler embed each file
 * and gives its path inside the binary's virtual filesystem (`/$bunfs/…`,
 * `B:/~BUN/…` on Windows); PGlite then takes them as modules and a Blob.
 * Under plain `bun` the paths point into node_modules and PGlite's own loader
 * is used unchanged.
 */
import type { PGliteOptions } from "@electric-sql/pglite";
import pgliteWasm from "../../node_modules/@electric-sql/pglite/dist/pglite.wasm" with { type: "file" };
import initdbWasm from "../../node_modules/@electric-sql/pglite/dist/initdb.wasm" with { type: "file" };
import pgliteData from "../../node_modules/@electric-sql/pglite/dist/pglite.data" with { type: "file" };

const EMBEDDED = /^(\/\$bunfs\/|[A-Z]:[\\/]~BUN[\\/])/;

export function insideCompiledBinary(): boolean {
  return EMBEDDED.test(pgliteWasm);
}

let cached: Promise<Partial<PGliteOptions>> | undefined;

/** Extra PGlite options: the embedded assets in a compiled binary, nothing otherwise. */
export function pgliteAssets(): Promise<Partial<PGliteOptions>> {
  if (!insideCompiledBinary()) return Promise.resolve({});
  cached ??= (async () => {
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([
      WebAssembly.compile(await Bun.file(pgliteWasm).arrayBuffer()),
      WebAssembly.compile(await Bun.file(initdbWasm).arrayBuffer()),
    ]);
    const bytes = await Bun.file(pgliteData).arrayBuffer();
    return { pgliteWasmModule, initdbWasmModule, fsBundle: new Blob([bytes]) };
  })();
  return cached;
}
