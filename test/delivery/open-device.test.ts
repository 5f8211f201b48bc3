import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { and, eq, sql } from "drizzle-orm";
import { deliveryDevices, deliveryMarks, inbox, userDevices } from "../../src/db/schema/index.ts";
import { InboxReader, OPEN_BATCH_MAX } from "../../src/delivery/inbox.ts";
import { ID_EPOCH_MS, idFloorForTime } from "../../src/ids/tsid.ts";
import { freshStore, storeKinds, type TestStore } from "../support/stores.ts";

const U = 500000000000000001n;
const T0 = Date.UTC(2026, 0, 1);
const at = (ms: number) => idFloorForTime(ms); // an id minted at `ms`

for (const kind of storeKinds()) {
  describe(`InboxReader.openDevice [${kind}]`, () => {
    let ts: TestStore;
    let reader: InboxReader;
    beforeAll(async () => {
      ts = await freshStore(kind);
      reader = new InboxReader(ts.store);
    });
    afterAll(() => ts.dispose());
    beforeEach(async () => {
      await ts.store.db.execute(sql`truncate inbox, delivery_mark, delivery_device, user_device`);
    });

    const floorOf = async (deviceId: string) =>
      (await ts.store.db.select().from(deliveryDevices).where(and(eq(deliveryDevices.userId, U), eq(deliveryDevices.deviceId, deviceId))))[0]?.floorId;
    const register = (deviceId: string, status: number, createdAt: number) =>
      ts.store.db.insert(userDevices).values({ userId: U, deviceId, status, createdAt, lastSeenAt: createdAt });
    const stored = (...ids: bigint[]) => ts.store.db.insert(inbox).values(ids.map((messageId) => ({ userId: U, messageId })));

    test("an unregistered device gets the fresh floor: older messages are not pending, newer ones are", async () => {
      await stored(at(T0 + 1000));
      expect(await reader.openDevice(U, "d1", at(T0 + 2000))).toEqual({ status: undefined, pending: false });
      expect(await floorOf("d1")).toBe(at(T0 + 2000));
      await stored(at(T0 + 3000));
      // Seen again: the floor stays where it was set, whatever `fresh` says now.
      expect(await reader.openDevice(U, "d1", at(T0 + 9000))).toEqual({ status: undefined, pending: true });
      expect(await floorOf("d1")).toBe(at(T0 + 2000));
    });

    test("a registered device's floor is its registration time", async () => {
      await register("d2", 1, T0 + 1000);
      await stored(at(T0 + 500), at(T0 + 1500));
      expect(await reader.openDevice(U, "d2", at(T0 + 5000))).toEqual({ status: 1, pending: true });
      expect(await floorOf("d2")).toBe((BigInt(T0 + 1000) - BigInt(ID_EPOCH_MS)) << 22n);
    });

    test("marked messages are not pending; agrees with ensureDevice + hasPending", async () => {
      await register("d3", 1, T0);
      await stored(at(T0 + 100), at(T0 + 200));
      await ts.store.db.insert(deliveryMarks).values([{ userId: U, deviceId: "d3", messageId: at(T0 + 100) }]);
      expect((await reader.openDevice(U, "d3", at(T0 + 5000))).pending).toBe(true);
      await ts.store.db.insert(deliveryMarks).values([{ userId: U, deviceId: "d3", messageId: at(T0 + 200) }]);
      expect((await reader.openDevice(U, "d3", at(T0 + 5000))).pending).toBe(false);
      expect(await reader.hasPending(U, "d3")).toBe(false);
    });

    test("a retired device (status 0 or -1) is reported and gets no floor", async () => {
      await register("gone", -1, T0);
      await register("revoked", 0, T0);
      await stored(at(T0 + 100));
      expect(await reader.openDevice(U, "gone", at(T0 + 5000))).toEqual({ status: -1, pending: false });
      expect(await reader.openDevice(U, "revoked", at(T0 + 5000))).toEqual({ status: 0, pending: false });
      expect(await floorOf("gone")).toBeUndefined();
      expect(await floorOf("revoked")).toBeUndefined();
    });

    test("concurrent connects (batched into shared statements) each get their own answer (odd device ids, one device twice)", async () => {
      const odd = ['q"uote', "back\\slash", "{brace}", "ü-ñ"];
      await register(odd[0]!, 1, T0 + 5000); // registered after the message: not pending
      await register("retired", 0, T0);
      await stored(at(T0 + 1000));
      const answers = await Promise.all([
        reader.openDevice(U, odd[0]!, at(T0)),
        reader.openDevice(U, odd[1]!, at(T0)), // fresh floor before the message: pending
        reader.openDevice(U, odd[2]!, at(T0 + 2000)),
        reader.openDevice(U, odd[3]!, at(T0)),
        reader.openDevice(U, "retired", at(T0)),
        reader.openDevice(U, odd[1]!, at(T0 + 9000)), // the same device again: same answer
      ]);
      expect(answers).toEqual([
        { status: 1, pending: false },
        { status: undefined, pending: true },
        { status: undefined, pending: false },
        { status: undefined, pending: true },
        { status: 0, pending: false },
        { status: undefined, pending: true },
      ]);
      for (const d of odd.slice(1)) expect(await floorOf(d)).toBeDefined();
      expect(await floorOf(odd[1]!)).toBe(at(T0));
    });

    test("openDevices (a turn's connects): answers in request order across statements of OPEN_BATCH_MAX, a repeat shares its first request's", async () => {
      await stored(at(T0 + 1000));
      // Even devices connect with a floor before the message (pending), odd ones after it (not pending).
      const n = OPEN_BATCH_MAX + 3;
      const reqs = Array.from({ length: n }, (_, i) => ({ userId: U, deviceId: `bulk-${i}`, fresh: at(T0 + (i % 2 ? 2000 : 0)) }));
      reqs.splice(2, 0, { userId: U, deviceId: "bulk-0", fresh: at(T0 + 9000) }); // bulk-0 again, in the same statement
      const answers = await reader.openDevices(reqs);
      expect(answers).toHaveLength(reqs.length);
      expect(answers[2]).toEqual({ status: undefined, pending: true }); // as its first request, whose floor it shares
      reqs.forEach((r, i) => {
        if (i !== 2) expect([r.deviceId, answers[i]!.pending]).toEqual([r.deviceId, Number(r.deviceId.slice(5)) % 2 === 0]);
      });
      expect(await floorOf("bulk-0")).toBe(at(T0));
      expect(await floorOf(`bulk-${n - 1}`)).toBe(at(T0 + ((n - 1) % 2 ? 2000 : 0)));
    });
  });
}
