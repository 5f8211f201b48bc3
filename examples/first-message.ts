/**
 * Your first message (README "First message"): against a running Ibis
 * server, sign up two users, make them friends, open a connection for each
 * and send one C2C message from Alice to Bob; prints what Bob received.
 *
 *   bun run start            # in one terminal
 *   bun run example          # in another
 *
 * IBIS_URL (default http://localhost:9800) points at the server; with
 * IBIS_API_SIGNATURE on, IBIS_APP_ID and IBIS_APP_KEY sign the REST calls.
 */
import { IbisApi, IbisConnection, newMessageId, type ApiOptions } from "../src/client/index.ts";

const url = process.env.IBIS_URL ?? "http://localhost:9800";
const signing = process.env.IBIS_APP_ID ? { app: process.env.IBIS_APP_ID, key: process.env.IBIS_APP_KEY ?? "" } : undefined;
const ca = process.env.IBIS_CA_FILE ? await Bun.file(process.env.IBIS_CA_FILE).text() : undefined;
const suffix = Date.now().toString(36);

async function user(name: string) {
  const opts: ApiOptions = { url, signing, deviceId: `${name}-laptop`, deviceType: "desktop", fetchInit: ca ? ({ tls: { ca } } as RequestInit) : undefined };
  const api = new IbisApi(opts);
  const session = await api.signup(`${name}.${suffix}`, "first-message-demo", name);
  return { api, session, device: opts.deviceId! };
}

const alice = await user("alice");
const bob = await user("bob");
console.log(`signed up alice (${alice.session.userId}) and bob (${bob.session.userId})`);

await alice.api.call("POST", "/api/v1/friend/add", { to: bob.session.userId });
await bob.api.call("POST", "/api/v1/friend/confirm", { from: alice.session.userId });
console.log("alice and bob are friends");

const open = (who: typeof alice) =>
  IbisConnection.open({ url, token: who.session.token, deviceId: who.device, deviceType: "desktop", tls: ca ? { ca } : undefined });
const [aliceWs, bobWs] = await Promise.all([open(alice), open(bob)]);

const id = newMessageId("C2C");
aliceWs.send({ id, type: "C2C", from: alice.session.userId, to: bob.session.userId, msg_type: "text", payload: { text: "Hello, Bob!" }, server_ts: 0 });
const received = await bobWs.nextMessage((m) => m.type === "C2C" && m.id === id, 10_000);
bobWs.ack({ type: "C2C", msgId: id });
console.log(`bob received from ${received.from}: ${JSON.stringify(received.payload)}`);

await Promise.all([aliceWs.close(), bobWs.close()]);
