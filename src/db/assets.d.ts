// `import x from "….wasm" with { type: "file" }` yields the file's path (embedded in compiled binaries).
declare module "*.wasm" {
  const path: string;
  export default path;
}
declare module "*.data" {
  const path: string;
  export default path;
}
