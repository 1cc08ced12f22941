/**
 * The review side of the DecisionStore contract, for every implementation: the review queue's
 * pages with their capped total, a policy's backlog, the move between the queue and the
 * reviewed list, versioned review writes with history, expiring claims and an admin's take-over,
 * and audit samples listed since a time.
 */
import { describe, expect, it } from "vitest";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import type { DecisionStore } from "../../shared/domain/decision-store.ts";
import { at, pendingRecord, uniquePolicy } from "./decision-store.contract.ts";

/** Runs the review contract against the store `make()` returns. */
export function decisionStoreReviewContract(name: string, make: () => DecisionStore): void {
  describe(`DecisionStore review contract: ${name}`, () => {
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

    it("queues a decided item at the time it joined the queue, and ages the backlog by it", async () => {
      const store = make();
      const policyId = uniquePolicy("queued");
      const waiting = pendingRecord({ policyId, createdAt: at(2034, 20) });
      const early = pendingRecord({ policyId, status: "actioned", route: "auto", createdAt: at(2034, 1) });
      const late = pendingRecord({ policyId, status: "actioned", route: "auto", createdAt: at(2034, 2) });
      for (const r of [waiting, early, late]) await store.create(r);
      // A certification sample joins the queue at a time of its own, not at its decision time.
      expect(await store.transition(early, "actioned", "pending_review", { queuedAt: at(2034, 10) })).toBe(
        true,
      );
      expect(await store.transition(late, "actioned", "pending_review", { queuedAt: at(2034, 30) })).toBe(
        true,
      );
      const page = await store.pageReviewQueue({ policyIds: [policyId], limit: 10, countCap: 10 });
      expect(page.records.map((r) => r.itemId)).toEqual([early.itemId, waiting.itemId, late.itemId]);
      expect(page.records[0]).toMatchObject({ queuedAt: at(2034, 10), createdAt: at(2034, 1) });
      expect(await store.pendingOf(policyId, 10)).toEqual({ count: 3, oldestCreatedAt: at(2034, 10) });
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
  });
}
