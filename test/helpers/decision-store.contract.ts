/**
 * One contract suite for every DecisionStore implementation (DynamoDB on DynamoDB Local, and in
 * memory): conditional create and the lost race, latest across policy versions, the publish
 * lease, mark published, status transitions, the set-once ledger, the decisions view's window
 * with its filters, the drift sample, failure notes and batch membership. The review side (the
 * queue, the backlog, review writes and claims) is `decision-store-review.contract.ts`.
 */
import { describe, expect, it } from "vitest";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import type { DecisionFilter, DecisionStore } from "../../shared/domain/decision-store.ts";

let counter = 0;
/** A policy id no other test uses (the DynamoDB suite shares one table). */
export const uniquePolicy = (name: string) => `${name}-${process.pid}-${++counter}`;
/** An ISO time `minutes` into the first of January of `year`. */
export const at = (year: number, minutes: number) => new Date(Date.UTC(year, 0, 1, 0, minutes)).toISOString();

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

    it("creates a record holding the publish lease: nobody else claims it before it expires", async () => {
      const store = make();
      const record = pendingRecord();
      expect((await store.create(record, 20_000)).created).toBe(true);
      expect(await store.claimPublish(record, 1000, 19_999)).toBe(false);
      expect(await store.claimPublish(record, 1000, 20_001)).toBe(true);
      expect((await store.get(record)) as unknown as Record<string, unknown>).not.toHaveProperty(
        "publishLeaseUntil",
      );
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

    it("moves a status only while the record holds the choice and route it was checked with", async () => {
      const store = make();
      const record = pendingRecord();
      await store.create(record);
      const holding = { status: "pending_review" as const, route: record.route!, chosen: record.chosen! };
      expect(await store.transition(record, { ...holding, chosen: "not-its-choice" }, "reviewed")).toBe(
        false,
      );
      expect(await store.transition(record, { ...holding, route: "auto" }, "reviewed")).toBe(false);
      expect((await store.get(record))?.status).toBe("pending_review");
      expect(await store.transition(record, holding, "reviewed", { label: "billing" })).toBe(true);
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

    it("pages decisions newest first through a window, filtered by policy, route and batch, rejected items included", async () => {
      const store = make();
      const [a, b] = [uniquePolicy("view-a"), uniquePolicy("view-b")];
      const year = 2035 + (counter % 50);
      const made = [
        pendingRecord({ policyId: a, status: "auto_approved", route: "auto", createdAt: at(year, 1) }),
        pendingRecord({ policyId: a, createdAt: at(year, 2), batchId: "b-contract-view" }),
        pendingRecord({ policyId: b, status: "actioned", route: "auto", createdAt: at(year, 3) }),
        pendingRecord({
          policyId: a,
          policyVersion: 0,
          status: "rejected",
          route: undefined,
          createdAt: at(year, 4),
        }),
        pendingRecord({
          policyId: "no-such",
          policyVersion: 0,
          status: "rejected",
          route: undefined,
          createdAt: at(year, 5),
        }),
        pendingRecord({
          policyId: a,
          status: "reviewed",
          createdAt: at(year, 6),
          batchId: "b-contract-view",
        }),
      ];
      const outside = pendingRecord({ policyId: a, createdAt: at(year, 60) });
      for (const record of [...made, outside]) await store.create(record);
      const window = { since: at(year, 1), until: at(year, 60), policyIds: [a, b] };
      const list = async (filter: Partial<DecisionFilter>) => {
        const ids: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await store.pageDecisions(
            { ...window, ...filter },
            { limit: 2, ...(cursor ? { cursor } : {}) },
          );
          expect(page.records.length).toBeLessThanOrEqual(2);
          ids.push(...page.records.map((r) => r.itemId));
          cursor = page.next;
        } while (cursor);
        return ids;
      };
      const ids = (...i: number[]) => i.map((n) => made[n]!.itemId);
      expect(await list({})).toEqual(ids(5, 4, 3, 2, 1, 0));
      expect(await list({ policyId: a })).toEqual(ids(5, 3, 1, 0));
      expect(await list({ route: "human" })).toEqual(ids(5, 1));
      expect(await list({ batchId: "b-contract-view" })).toEqual(ids(5, 1));
      expect(await list({ policyId: b, route: "auto" })).toEqual(ids(2));
      expect(await list({ since: at(year, 2), until: at(year, 4) })).toEqual(ids(2, 1));
      await expect(store.pageDecisions(window, { limit: 2, cursor: "%%%" })).rejects.toThrow("cursor");
    });

    it("samples at most `size` decisions of a policy version in a window, every one when there are fewer", async () => {
      const store = make();
      const policyId = uniquePolicy("sample");
      const mine = Array.from({ length: 30 }, (_, i) =>
        pendingRecord({ policyId, status: "auto_approved", route: "auto", createdAt: at(2036, i * 10) }),
      );
      for (const record of mine) await store.create(record);
      for (let i = 0; i < 10; i++)
        await store.create(pendingRecord({ policyId, policyVersion: 2, createdAt: at(2036, i * 10 + 5) }));
      const window = { policyId, policyVersion: 1, since: at(2036, 0), until: at(2036, 300), slices: 6 };
      const all = await store.sampleDecisions({ ...window, size: 100 });
      expect(all.map((r) => r.itemId).sort()).toEqual(mine.map((r) => r.itemId).sort());
      const few = await store.sampleDecisions({ ...window, size: 10 });
      expect(few.length).toBeGreaterThan(0);
      expect(few.length).toBeLessThanOrEqual(10);
      expect(new Set(few.map((r) => r.itemId)).size).toBe(few.length);
      for (const r of few) expect(r).toMatchObject({ policyId, policyVersion: 1 });
    });

    it("notes the last failure of a message", async () => {
      const store = make();
      const id = `message-${Date.now()}-${++counter}`;
      expect(await store.failureOf(id)).toBeUndefined();
      expect(await store.noteFailure(id, "first")).toBe(1);
      expect(await store.noteFailure(id, "second")).toBe(2);
      expect((await store.failureOf(id))?.reason).toBe("second");
    });

    it("notes each other batch of an item once, never its own, and nothing without a record", async () => {
      const store = make();
      const record = pendingRecord({ batchId: "b-first-000001" });
      await store.create(record);
      expect(await store.addToBatch(record, "b-first-000001")).toBe(false);
      expect(await store.addToBatch(record, "b-second-000001")).toBe(true);
      expect(await store.addToBatch(record, "b-second-000001")).toBe(false);
      expect(await store.addToBatch(record, "b-third-000001")).toBe(true);
      expect((await store.get(record))!.otherBatchIds).toEqual(["b-second-000001", "b-third-000001"]);
      expect(await store.addToBatch(pendingRecord(), "b-second-000001")).toBe(false);
    });
  });
}
