/**
 * One contract suite for every DecisionStore implementation (DynamoDB on DynamoDB Local, and in
 * memory): conditional create and the lost race, latest across policy versions, the publish
 * lease, mark published, status transitions, the set-once ledger, the lists and their pages (the
 * review queue with its capped total, a policy's backlog, the reviewed list, the decisions view's
 * window with its filters, the drift sample), and the review writes (versioned write with
 * history, expiring claim).
 */
import { describe, expect, it } from "vitest";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import type { DecisionFilter, DecisionStore } from "../../shared/domain/decision-store.ts";

let counter = 0;
/** A policy id no other test uses (the DynamoDB suite shares one table). */
const uniquePolicy = (name: string) => `${name}-${process.pid}-${++counter}`;
/** An ISO time `minutes` into the first of January of `year`. */
const at = (year: number, minutes: number) => new Date(Date.UTC(year, 0, 1, 0, minutes)).toISOString();

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

    it("pages the review queue oldest first across policies, with a capped total, and refuses a foreign cursor", async () => {
      const store = make();
      const [a, b] = [uniquePolicy("queue-a"), uniquePolicy("queue-b")];
      const waiting = Array.from({ length: 7 }, (_, i) =>
        pendingRecord({ policyId: i % 2 ? a : b, createdAt: at(2033, i) }),
      );
      for (const record of [...waiting].reverse()) await store.create(record);
      await store.create(pendingRecord({ policyId: a, status: "reviewed", createdAt: at(2033, 0) }));
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.pageReviewQueue({
          policyIds: [a, b],
          limit: 2,
          countCap: 100,
          ...(cursor ? { cursor } : {}),
        });
        expect(page.records.length).toBeLessThanOrEqual(2);
        expect(page).toMatchObject({ total: 7 });
        expect(page.capped).toBeFalsy();
        seen.push(...page.records.map((r) => r.itemId));
        cursor = page.next;
      } while (cursor);
      expect(seen).toEqual(waiting.map((r) => r.itemId));
      const capped = await store.pageReviewQueue({ policyIds: [a, b], limit: 1, countCap: 5 });
      expect(capped).toMatchObject({ total: 5, capped: true });
      expect((await store.pageReviewQueue({ policyIds: [a], limit: 10, countCap: 100 })).total).toBe(3);
      await expect(
        store.pageReviewQueue({ policyIds: [a], limit: 2, countCap: 100, cursor: "%%%" }),
      ).rejects.toThrow("cursor");
    });

    it("summarizes a policy's backlog: how many wait (capped) and since when the oldest has", async () => {
      const store = make();
      const policyId = uniquePolicy("backlog");
      for (const minute of [30, 10, 20])
        await store.create(pendingRecord({ policyId, createdAt: at(2033, minute) }));
      await store.create(pendingRecord({ policyId, status: "auto_approved", createdAt: at(2033, 1) }));
      expect(await store.pendingOf(policyId, 10)).toEqual({ count: 3, oldestCreatedAt: at(2033, 10) });
      expect(await store.pendingOf(policyId, 2)).toMatchObject({ count: 2, capped: true });
      expect(await store.pendingOf(uniquePolicy("none"), 10)).toEqual({ count: 0 });
    });

    it("moves a record between the queue and the reviewed list with the review writes and transitions", async () => {
      const store = make();
      const policyId = uniquePolicy("lists");
      const record = pendingRecord({ policyId });
      await store.create(record);
      const reviewedIds = async (since: string) => {
        const ids: string[] = [];
        for await (const r of store.reviewedSince(policyId, since)) ids.push(r.itemId);
        return ids;
      };
      const queued = async () =>
        (await store.pageReviewQueue({ policyIds: [policyId], limit: 10, countCap: 10 })).records.map(
          (r) => r.itemId,
        );
      const label = { label: "billing", reviewedAt: "2034-01-01T10:00:00.000Z" };
      const review = { from: "pending_review" as const, to: "reviewed" as const, reviewVersion: 0 };
      expect(await store.writeReview(record, { ...review, set: label })).toBe(true);
      expect(await queued()).toEqual([]);
      expect(await reviewedIds("2034-01-01T10:00:00.000Z")).toEqual([record.itemId]);
      expect(await reviewedIds("2034-01-01T10:00:00.001Z")).toEqual([]);
      // A changed label moves it to its new time; an undo puts it back in the queue.
      const change = { from: "reviewed" as const, to: "reviewed" as const, reviewVersion: 1 };
      await store.writeReview(record, {
        ...change,
        set: { label: "technical", reviewedAt: "2034-02-01T00:00:00.000Z" },
      });
      expect(await reviewedIds("2034-01-15T00:00:00.000Z")).toEqual([record.itemId]);
      const undo = { from: "reviewed" as const, to: "pending_review" as const, reviewVersion: 2 };
      expect(await store.writeReview(record, { ...undo, set: {}, remove: ["label", "reviewedAt"] })).toBe(
        true,
      );
      expect(await queued()).toEqual([record.itemId]);
      expect(await reviewedIds("0")).toEqual([]);
      expect(await store.transition(record, "pending_review", "reviewed", label)).toBe(true);
      expect(await reviewedIds("2034-01-01T00:00:00.000Z")).toEqual([record.itemId]);
      expect(await queued()).toEqual([]);
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

    it("keeps an audit sample's band, inclusion probability and shadow score, and lists a policy's pending items since a time", async () => {
      const store = make();
      const policyId = uniquePolicy("audit");
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
        policyId,
        reason: "audit_sample",
        auditBand: "0.95-0.99",
        auditInclusionProbability: 0.05,
        shadow,
        createdAt: "2032-03-01T00:00:00.000Z",
      });
      await store.create(sample);
      // Left out: decided before the time, another policy's, and one no longer pending.
      await store.create(pendingRecord({ policyId, createdAt: "2032-02-01T00:00:00.000Z" }));
      await store.create(pendingRecord({ createdAt: "2032-03-02T00:00:00.000Z" }));
      const reviewed = pendingRecord({
        policyId,
        status: "reviewed",
        reason: "audit_sample",
        auditBand: "0.95-0.99",
        auditInclusionProbability: 0.05,
        label: "technical",
        reviewedAt: "2032-03-03T00:00:00.000Z",
        createdAt: "2032-03-02T00:00:00.000Z",
      });
      await store.create(reviewed);
      const listed: DecisionRecord[] = [];
      for await (const r of store.pendingSince(policyId, "2032-02-15T00:00:00.000Z")) listed.push(r);
      expect(listed.map((r) => r.itemId)).toEqual([sample.itemId]);
      expect(listed[0]).toMatchObject({ auditBand: "0.95-0.99", auditInclusionProbability: 0.05, shadow });
      const labelled: DecisionRecord[] = [];
      for await (const r of store.reviewedSince(policyId, "2032-02-15T00:00:00.000Z")) labelled.push(r);
      expect(labelled.map((r) => r.itemId)).toEqual([reviewed.itemId]);
      expect(labelled[0]).toMatchObject({ auditBand: "0.95-0.99", auditInclusionProbability: 0.05 });
    });

    it("lets a take-over replace another reviewer's unexpired claim, on a pending item only", async () => {
      const store = make();
      const record = pendingRecord();
      await store.create(record);
      const ana = { reviewerId: "ana", reviewerName: "Ana", until: 9_000 };
      const root = { reviewerId: "root", reviewerName: "Root", until: 9_500 };
      expect(await store.claimReview(record, ana, 1_000)).toBe(true);
      expect(await store.claimReview(record, root, 2_000)).toBe(false);
      expect(await store.claimReview(record, root, 2_000, { takeOver: true })).toBe(true);
      expect((await store.get(record))!.claim).toEqual(root);
      const done = pendingRecord({ status: "reviewed" });
      await store.create(done);
      expect(await store.claimReview(done, root, 2_000, { takeOver: true })).toBe(false);
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
