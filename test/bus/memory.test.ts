import { MemoryBusHub } from "../../src/bus/memory.ts";
import type { Bus } from "../../src/bus/bus.ts";
import { createLogger } from "../../src/log.ts";
import { runBusSuite } from "./bus.case.ts";

runBusSuite("memory", async () => {
  const hub = new MemoryBusHub();
  const buses: Bus[] = [];
  return {
    bus: async (nodeId) => {
      const bus = hub.bus(nodeId, createLogger("silent"));
      buses.push(bus);
      return bus;
    },
    dispose: async () => {
      for (const b of buses) await b.close();
    },
  };
});
