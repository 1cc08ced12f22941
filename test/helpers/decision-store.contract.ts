/**
 * One contract suite for every DecisionStore implementation (DynamoDB on DynamoDB Local, and in
 * memory): conditional create and the lost race, latest across policy versions, the publish
 * lease, mark published, status transitions, the set-once ledger and the status listings.
 */
import { describe, expect, it } from "vitest";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import type { DecisionStore } from "../../shared/domain/decision-store.ts";

let counter = 0;
/** A pending record with a unique item id. */
export function pendingRecord(overrides: Partial<DecisionRecord> = {}): DecisionRecord {
  counter++;
  return {
    itemId: `CONTRACT-${Date.now()}-${counter}`,
    policyId: "ticket-routing",
    policyVersion: 1,
    status: "pending_review",
    route: "human",
    reason: "below_threshold",
    chosen: "billing",
    distribution: { billing: 0.6, technical: 0.4 },
    state: { text: "charged twice", nested: { deep: [1, { "": "empty key" }] } },
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, counter)).toISOString(),
    updatedAt: new Date().toISOString(),
    eventPublished: false,
    ...overrides,
  };
}

/** Runs the contract against the store `make()` returns. */
export function decisionStoreContract(name: string, make: () => DecisionStore): void {
  describe(`DecisionStore contract: ${name}`, () => {
    it("creates a record once; a second create returns the first record unchanged", async () => {
      const store = make();
      const first = pendingRecord();
      expect((await store.create(first)).created).toBe(true);
      const second = await store.create({ ...first, chosen: "technical" });
      expect(second.created).toBe(false);
      expect(second.record.chosen).toBe("billing");
      expect(await store.get(first)).toMatchObject({
        itemId: first.itemId,
        chosen: "billing",
        state: first.state,
      });
    });

    it("lets exactly one of two racing creates win", async () => {
      const store = make();
      const record = pendingRecord();
      const outcomes = await Promise.all([
        store.create({ ...record, chosen: "billing" }),
        store.create({ ...record, chosen: "technical" }),
      ]);
      expect(outcomes.filter((o) => o.created)).toHaveLength(1);
      expect(outcomes[0]!.record.chosen).toBe(outcomes[1]!.record.chosen);
    });

    it("finds the latest version of an item under a policy, ignoring version 0 and other policies", async () => {
      const store = make();
      const v1 = pendingRecord();
      await store.create(v1);
      await store.create({ ...v1, policyVersion: 0, status: "rejected" });
      await store.create({ ...v1, policyVersion: 3, chosen: "technical" });
      await store.create({ ...v1, policyId: "content-moderation", policyVersion: 9 });
      expect((await store.latest(v1.itemId, v1.policyId))?.policyVersion).toBe(3);
      expect(await store.latest(`${v1.itemId}-other`, v1.policyId)).toBeUndefined();
    });

    it("grants the publish lease to one holder until it expires or the event is marked published", async () => {
      const store = make();
      const record = pendingRecord();
      await store.create(record);
      expect(await store.claimPublish(record, 1000, 10_000)).toBe(true);
      expect(await store.claimPublish(record, 1000, 10_500)).toBe(false);
      expect(await store.claimPublish(record, 1000, 11_001)).toBe(true);
      await store.markPublished(record);
      expect((await store.get(record))?.eventPublished).toBe(true);
      expect(await store.claimPublish(record, 1000, 99_000)).toBe(false);
      expect(await store.claimPublish(pendingRecord(), 1000, 10_000)).toBe(false);
    });

    it("moves a status only from the expected one, with fields", async () => {
      const store = make();
      const record = pendingRecord();
      await store.create(record);
      expect(await store.transition(record, "auto_approved", "actioned")).toBe(false);
      expect(await store.transition(record, "pending_review", "reviewed", { label: "billing" })).toBe(true);
      expect(await store.transition(record, "pending_review", "reviewed", { label: "technical" })).toBe(
        false,
      );
      expect(await store.get(record)).toMatchObject({ status: "reviewed", label: "billing" });
    });

    it("sets a ledger field once, and never on a missing record", async () => {
      const store = make();
      const record = pendingRecord();
      await store.create(record);
      const results = await Promise.all([
        store.setOnce(record, "reviewQueuedBy", "event-a"),
        store.setOnce(record, "reviewQueuedBy", "event-b"),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store.setOnce(record, "reviewQueuedBy", "event-c")).toBe(false);
      expect(["event-a", "event-b"]).toContain((await store.get(record))?.reviewQueuedBy);
      expect(await store.setOnce(pendingRecord(), "reviewQueuedBy", "event-d")).toBe(false);
    });

    it("lists records by status, oldest first, and since a time", async () => {
      const store = make();
      const older = pendingRecord({ status: "auto_approved", createdAt: "2031-01-01T00:00:00.000Z" });
      const newer = pendingRecord({ status: "auto_approved", createdAt: "2031-01-02T00:00:00.000Z" });
      await store.create(newer);
      await store.create(older);
      const since = await store.listSince("auto_approved", "2031-01-01T12:00:00.000Z");
      expect(since.map((r) => r.itemId)).toEqual([newer.itemId]);
      const listed = (await store.listByStatus("auto_approved", 1000)).map((r) => r.itemId);
      expect(listed.indexOf(older.itemId)).toBeLessThan(listed.indexOf(newer.itemId));
    });

    it("notes the last failure of a message", async () => {
      const store = make();
      const id = `message-${Date.now()}-${++counter}`;
      expect(await store.failureOf(id)).toBeUndefined();
      await store.noteFailure(id, "first");
      await store.noteFailure(id, "second");
      expect((await store.failureOf(id))?.reason).toBe("second");
    });
  });
}
