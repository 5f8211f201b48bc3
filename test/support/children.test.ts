import { expect, test } from "bun:test";
import { until } from "../bus/collector.ts";
import { alive, descendants, killLeftovers, tracked } from "./children.ts";

test("a tracked process left running is killed with its descendants, and named", async () => {
  const sh = tracked(Bun.spawn(["sh", "-c", "sleep 300 & sleep 301 & wait"], { stdout: "ignore" }));
  await until(() => descendants(sh.pid).length === 2);
  const kids = descendants(sh.pid);
  const killed = killLeftovers([sh]);
  expect(killed).toHaveLength(3);
  expect(killed[0]).toStartWith(`${sh.pid} sh -c`);
  expect(killed.slice(1).map((k) => Number(k.split(" ")[0])).sort()).toEqual([...kids].sort());
  for (const k of killed.slice(1)) expect(k).toMatch(/^\d+ sleep 30[01]$/);
  expect(await sh.exited).not.toBe(0);
  await until(() => !kids.some(alive));
  expect(killLeftovers([sh])).toEqual([]); // gone: nothing left to kill
});
