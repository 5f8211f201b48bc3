import { withAllocatorDefaults } from "./runtime/allocator.ts";

// Entry point of `bun run start [--workers N]` and of the compiled binary. The allocator's settings come first: they
// are read once at process start, so this may start the process again before anything else is loaded.
withAllocatorDefaults();
await import("./start.ts");
