import { expect, test } from "bun:test";
import { until } from "../bus/collector.ts";
import { alive, descendants, killLeftovers, procList, tracked } from "./children.ts";

/** Whether `pid` has exec'd `sleep` (a forked shell child shows the parent's command line until it does). */
const sleeping = (pid: number): boolean => {
  try {
    return procList(pid, "cmdline")[0] === "sleep";
  } catch {
    return false;
  }
};

test("a tracked process left running is killed with its descendants, and named", async () => {
  const sh = tracked(Bun.spawn(["sh", "-c", "sleep 300 & sleep 301 & wait"], { stdout: "ignore" }));
  // Both children exist and have become `sleep`: a CI run once named one while it was still a forked `sh -c`.
  await until(() => {
    const kids = descendants(sh.pid);
    return kids.length === 2 && kids.every(sleeping);
  });
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
