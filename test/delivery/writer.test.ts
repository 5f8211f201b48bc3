import { describe, expect, test } from "bun:test";
import { messages } from "../../src/db/schema/index.ts";
import { DeliveryWriter, type StoreItem } from "../../src/delivery/writer.ts";
import { freshStore, storeKinds } from "../support/stores.ts";

const item = (id: bigint, clientId: string, from = 1n): StoreItem => ({
  row: { id, clientId, chatType: "C2C", fromId: from, toId: 2n, payload: "{}", serverTs: 1 },
  inbox: [from, 2n],
  marks: [],
});

for (const kind of storeKinds()) {
  describe(`DeliveryWriter [${kind}]`, () => {
    test("a resent id is a duplicate of the stored row; a server id already taken is `taken`, never acked as stored", async () => {
      const fresh = await freshStore(kind);
      const w = new DeliveryWriter(fresh.store, 16);
      expect(await w.messages.add(item(10n, "C2C.1.1.a"))).toEqual({ serverId: 10n, serverTs: 1, duplicate: false });
      // The same sender and client id again (a resend): acknowledged with the first row's server id.
      expect(await w.messages.add(item(11n, "C2C.1.1.a"))).toEqual({ serverId: 10n, serverTs: 1, duplicate: true });
      // Another message minted with server id 10 (two nodes with one node id, seen in the fault suite): not stored,
      // answered `taken` (the engine refuses it), alone and inside a batch, never as a duplicate of row 10.
      expect(await w.messages.add(item(10n, "C2C.2.1.b"))).toMatchObject({ duplicate: false, taken: true });
      const batch = await Promise.all([w.messages.add(item(12n, "C2C.3.1.c")), w.messages.add(item(10n, "C2C.4.1.d")), w.messages.add(item(10n, "C2C.4.1.d"))]);
      expect(batch.map((r) => r.taken === true)).toEqual([false, true, true]);
      const stored = await fresh.store.db.select({ clientId: messages.clientId }).from(messages);
      expect(stored.map((r) => r.clientId).sort()).toEqual(["C2C.1.1.a", "C2C.3.1.c"]);
      await fresh.dispose();
    });
  });
}
