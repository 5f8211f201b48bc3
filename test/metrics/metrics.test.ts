/** /metrics: the Prometheus text a scraper reads, moved by real traffic over real sockets (PGlite and PostgreSQL). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { IbisConnection } from "../../src/client/index.ts";
import { CounterFamily, Histogram, Registry } from "../../src/metrics/registry.ts";
import { metrics } from "../../src/metrics/index.ts";
import { befriend, message, ofType, signup } from "../e2e/support.ts";
import { api, startTestNode, type TestNode } from "../support/node.ts";
import { storeKinds } from "../support/stores.ts";

/** `name{labels} value` lines → map (the exposition format's sample lines). */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

async function scrape(node: TestNode, token?: string) {
  const res = await fetch(node.url + "/metrics", { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.status, type: res.headers.get("content-type"), values: samples(await res.text()) };
}

test("the exposition format: HELP/TYPE, escaped labels, cumulative histogram buckets", () => {
  const r = new Registry();
  const fam = r.add(new CounterFamily("x_total", "X."));
  fam.child({ kind: 'a"b\\c' }).inc(3);
  const h = r.add(new Histogram("y_seconds", "Y.", [0.1, 1]));
  for (const v of [0.05, 0.5, 0.5, 7]) h.observe(v);
  expect(r.render()).toBe(
    [
      "# HELP x_total X.",
      "# TYPE x_total counter",
      'x_total{kind="a\\"b\\\\c"} 3',
      "# HELP y_seconds Y.",
      "# TYPE y_seconds histogram",
      'y_seconds_bucket{le="0.1"} 1',
      'y_seconds_bucket{le="1"} 3',
      'y_seconds_bucket{le="+Inf"} 4',
      "y_seconds_sum 8.05",
      "y_seconds_count 4",
      "",
    ].join("\n"),
  );
});

test("bus lag is read from the Redis Streams entry id (its milliseconds)", () => {
  const before = metrics.busLag.count;
  metrics.busRead(Buffer.from(`${Date.now() - 2000}-0`));
  expect(metrics.busLag.count).toBe(before + 1);
});

for (const kind of storeKinds()) {
  describe(`/metrics [${kind}]`, () => {
    let node: TestNode;
    beforeAll(async () => {
      node = await startTestNode(kind);
    });
    afterAll(() => node.stop());

    test("connections, handshakes, refusals, messages, acks and commits move with real traffic", async () => {
      const before = (await scrape(node)).values;
      const alice = await signup(node, "mx-alice", ["a1"]);
      const bob = await signup(node, "mx-bob", ["b1"]);
      await befriend(node, alice, bob); // friend notices: S2C messages
      const a = await IbisConnection.open({ url: node.url, token: alice.tokens.a1!, deviceId: "a1", protocols: ["svc.v2"] });
      const b = await IbisConnection.open({ url: node.url, token: bob.tokens.b1!, deviceId: "b1", protocols: ["svc-json"] });
      await expect(IbisConnection.open({ url: node.url, token: "forged", deviceId: "x1" })).rejects.toThrow();
      const m = message("C2C", alice.userId, bob.userId);
      a.send(m);
      await b.nextMessage(ofType("C2C", m.id));
      b.ack({ type: "C2C", msgId: m.id });
      await b.nextMessage((x) => x.action === "CLIENT_ACK_CONFIRM" && x.id === m.id);

      const during = await scrape(node);
      expect(during.status).toBe(200);
      expect(during.type).toContain("text/plain; version=0.0.4");
      const d = (key: string) => (during.values.get(key) ?? 0) - (before.get(key) ?? 0);
      expect(d('ibis_ws_connections{protocol="svc.v2"}')).toBe(1);
      expect(d('ibis_ws_connections{protocol="svc-json"}')).toBe(1);
      expect(d("ibis_ws_handshakes_total")).toBe(2);
      expect(d('ibis_ws_handshake_refusals_total{status="401"}')).toBe(1);
      expect(d('ibis_messages_total{type="C2C"}')).toBe(1);
      expect(d('ibis_messages_total{type="S2C"}')).toBeGreaterThanOrEqual(2);
      expect(d("ibis_acks_total")).toBe(1);
      expect(d("ibis_db_commit_batch_size_count")).toBeGreaterThanOrEqual(1);
      expect(d("ibis_db_commit_seconds_count")).toBe(d("ibis_db_commit_batch_size_count"));
      expect(during.values.has('ibis_event_loop_delay_seconds{quantile="0.99"}')).toBe(true);
      expect(during.values.get("process_resident_memory_bytes")).toBeGreaterThan(1e6);

      await Promise.all([a.close(), b.close()]);
      await Bun.sleep(50);
      const after = (await scrape(node)).values;
      expect((after.get('ibis_ws_connections{protocol="svc.v2"}') ?? 0) - (before.get('ibis_ws_connections{protocol="svc.v2"}') ?? 0)).toBe(0);
    });
  });
}

test("IBIS_METRICS_TOKEN guards the endpoint; IBIS_METRICS=0 removes it", async () => {
  const guarded = await startTestNode("pglite", { metricsToken: "scrape-token-0123456789" });
  const off = await startTestNode("pglite", { metrics: false });
  try {
    expect((await scrape(guarded)).status).toBe(401);
    expect((await scrape(guarded, "wrong-token")).status).toBe(401);
    expect((await scrape(guarded, "scrape-token-0123456789")).status).toBe(200);
    expect((await api(off, "GET", "/metrics")).status).toBe(404);
  } finally {
    await guarded.stop();
    await off.stop();
  }
});
