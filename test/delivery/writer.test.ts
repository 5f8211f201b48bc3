import { describe, expect, test } from "bun:test";
import { messages } from "../../src/db/schema/index.ts";
import { DeliveryWriter, ServerIdTaken, type StoreItem } from "../../src/delivery/writer.ts";
import { freshStore, storeKinds } from "../support/stores.ts";

const item = (id: bigint, clientId: string, from = 1n): StoreItem => ({
  row: { id, clientId, chatType: "C2C", fromId: from, toId: 2n, payload: "{}", serverTs: 1 },
  inbox: [from, 2n],
  marks: [],
});

for (const kind of storeKinds()) {
  describe(`DeliveryWriter [${kind}]`, () => {
    test("a resent id is a duplicate of the stored row; a server id already taken is refused, never acked as stored", async () => {
      const fresh = await freshStore(kind);
      const w = new DeliveryWriter(fresh.store, 16);
      expect(await w.messages.add(item(10n, "C2C.1.1.a"))).toEqual({ serverId: 10n, serverTs: 1, duplicate: false });
      // The same sender and client id again (a resend): acknowledged with the first row's server id.
      expect(await w.messages.add(item(11n, "C2C.1.1.a"))).toEqual({ serverId: 10n, serverTs: 1, duplicate: true });
      // Another message minted with server id 10 (two nodes with one node id): refused, alone and inside a batch.
      await expect(w.messages.add(item(10n, "C2C.1.1.b"))).rejects.toBeInstanceOf(ServerIdTaken);
      const batch = await Promise.allSettled([w.messages.add(item(12n, "C2C.1.1.c")), w.messages.add(item(10n, "C2C.1.1.d")), w.messages.add(item(10n, "C2C.1.1.d"))]);
      expect(batch.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected"]);
      const stored = await fresh.store.db.select({ clientId: messages.clientId }).from(messages);
      expect(stored.map((r) => r.clientId).sort()).toEqual(["C2C.1.1.a", "C2C.1.1.c"]);
      await fresh.dispose();
    });
  });
}
