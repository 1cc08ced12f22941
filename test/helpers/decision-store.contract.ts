/**
 * One contract suite for every DecisionStore implementation (DynamoDB on DynamoDB Local, and in
 * memory): conditional create and the lost race, latest across policy versions, the publish
 * lease, mark published, status transitions, the set-once ledger, the status listings and pages,
 * and the review writes (versioned write with history, expiring claim).
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

    it("pages through a status oldest first, with the total, and refuses a foreign cursor", async () => {
      const store = make();
      const mine = [0, 1, 2].map((day) =>
        pendingRecord({ status: "rejected", createdAt: `2032-0${day + 1}-01T00:00:00.000Z` }),
      );
      for (const record of [...mine].reverse()) await store.create(record);
      const seen: string[] = [];
      let cursor: string | undefined;
      let total = 0;
      do {
        const page = await store.pageByStatus("rejected", { limit: 2, ...(cursor ? { cursor } : {}) });
        expect(page.records.length).toBeLessThanOrEqual(2);
        seen.push(...page.records.map((r) => r.itemId));
        total = page.total;
        cursor = page.next;
      } while (cursor);
      expect(seen).toHaveLength(total);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.filter((id) => mine.some((r) => r.itemId === id))).toEqual(mine.map((r) => r.itemId));
      await expect(store.pageByStatus("rejected", { limit: 2, cursor: "%%%" })).rejects.toThrow("cursor");
    });

    it("applies a review write once per version, appending history, and removes fields", async () => {
      const store = make();
      const record = pendingRecord({ claim: { reviewerId: "u1", reviewerName: "Ana", until: 1 } });
      await store.create(record);
      const entry = {
        action: "label" as const,
        label: "billing",
        reviewerId: "u1",
        reviewerName: "Ana",
        at: "t1",
      };
      const write = { from: "pending_review" as const, to: "reviewed" as const, reviewVersion: 0 };
      const results = await Promise.all([
        store.writeReview(record, { ...write, set: { label: "billing" }, remove: ["claim"], entry }),
        store.writeReview(record, {
          ...write,
          set: { label: "technical" },
          remove: ["claim"],
          entry: { ...entry, label: "technical" },
        }),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
      const after = (await store.get(record))!;
      expect(after.status).toBe("reviewed");
      expect(after.reviewVersion).toBe(1);
      expect(after.reviewHistory).toHaveLength(1);
      expect(after.reviewHistory![0]!.label).toBe(after.label);
      const undo = {
        action: "undo" as const,
        previousLabel: after.label,
        reviewerId: "u2",
        reviewerName: "Bo",
        at: "t2",
      };
      expect(
        await store.writeReview(record, {
          from: "reviewed",
          to: "pending_review",
          reviewVersion: 0,
          set: {},
          entry: undo,
        }),
      ).toBe(false);
      expect(
        await store.writeReview(record, {
          from: "reviewed",
          to: "pending_review",
          reviewVersion: 1,
          set: {},
          remove: ["label", "reviewer"],
          entry: undo,
        }),
      ).toBe(true);
      const undone = (await store.get(record))!;
      expect(undone).toMatchObject({ status: "pending_review", reviewVersion: 2 });
      expect(undone.label).toBeUndefined();
      expect(undone.claim).toBeUndefined();
      expect(undone.reviewHistory?.map((e) => e.action)).toEqual(["label", "undo"]);
    });

    it("claims a pending item for one reviewer until the claim expires", async () => {
      const store = make();
      const record = pendingRecord();
      await store.create(record);
      const ana = { reviewerId: "ana", reviewerName: "Ana", until: 2_000 };
      const bo = { reviewerId: "bo", reviewerName: "Bo", until: 3_000 };
      const raced = await Promise.all([
        store.claimReview(record, ana, 1_000),
        store.claimReview(record, bo, 1_000),
      ]);
      expect(raced.filter(Boolean)).toHaveLength(1);
      const holder = (await store.get(record))!.claim!;
      const other = holder.reviewerId === "ana" ? bo : ana;
      expect(await store.claimReview(record, { ...holder, until: 2_500 }, 1_500)).toBe(true); // renewal
      expect(await store.claimReview(record, other, 2_400)).toBe(false);
      expect(await store.claimReview(record, other, 2_600)).toBe(true); // expired
      expect((await store.get(record))!.claim?.reviewerId).toBe(other.reviewerId);
      const done = pendingRecord({ status: "reviewed" });
      await store.create(done);
      expect(await store.claimReview(done, ana, 1_000)).toBe(false);
    });

    it("keeps an audit sample's band, inclusion probability and shadow score, and lists it since a time", async () => {
      const store = make();
      const shadow = {
        policyVersion: 2,
        distribution: { billing: 0.7, technical: 0.3 },
        rawLogits: [0.8473, 0],
        chosen: "billing",
        route: "auto" as const,
        reason: "confident" as const,
        topProbability: 0.7,
        allowedTokenMass: null,
        promptSha256: "c".repeat(64),
        latencyMs: 12,
      };
      const sample = pendingRecord({
        reason: "audit_sample",
        auditBand: "0.95-0.99",
        auditInclusionProbability: 0.05,
        shadow,
        createdAt: "2032-03-01T00:00:00.000Z",
      });
      await store.create(sample);
      await store.create(pendingRecord({ createdAt: "2032-02-01T00:00:00.000Z" }));
      const listed = await store.listSince("pending_review", "2032-02-15T00:00:00.000Z");
      expect(listed.map((r) => r.itemId)).toEqual([sample.itemId]);
      expect(listed[0]).toMatchObject({ auditBand: "0.95-0.99", auditInclusionProbability: 0.05, shadow });
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
